import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copySnapshot } from '../../../src/sandbox-server/engines/copy-snapshot.js';
import { demultiplexLogs } from '../../../src/sandbox-server/runtime/docker-logs.js';
import { LABEL_INSTANCE, LABEL_SNAPSHOT_ID, LABEL_VOLUME_COPY } from '../../../src/sandbox-server/runtime/runtime.js';
import { connectDocker, removeInstanceResources, TEST_BASE_IMAGE, testInstanceId } from '../../helpers/docker.js';

const run = promisify(execFile);
const SHARED = process.env.SHARED_DIR ?? join(import.meta.dirname, '..', '..', '..', '..', 'shared');
const main = await connectDocker();

/** Runs `script` in a throwaway container of `docker` with `volume` at /volume; answers its output. */
async function inVolume(docker: Docker, volume: string, script: string): Promise<string> {
  const container = await docker.createContainer({
    Image: TEST_BASE_IMAGE,
    Entrypoint: ['sh', '-c', script],
    Cmd: [],
    User: '0:0',
    HostConfig: { NetworkMode: 'none', Mounts: [{ Type: 'volume', Source: volume, Target: '/volume' }] },
  });
  try {
    await container.start();
    const { StatusCode } = (await container.wait()) as { StatusCode: number };
    const logs = demultiplexLogs(Buffer.from(await container.logs({ stdout: true, stderr: true })));
    expect(StatusCode, logs).toBe(0);
    return logs;
  } finally {
    await container.remove({ force: true });
  }
}

/** Moving a sandbox between engines rests on this: a snapshot's image and volume, copied engine to engine. */
describe.runIf(main)('copySnapshot between two real engines', { timeout: 180_000 }, () => {
  // Engine e1 is the fleet tests' (started by the shared script, idempotently); only this test's labelled resources are touched.
  const e1 = new Docker({ socketPath: '/var/run/docker-e1.sock' });
  const instanceId = testInstanceId();
  const snapshotId = `${instanceId}-snap`;
  const image = `sandbox-server/snapshot:${snapshotId}`;
  const volume = `sandbox-server-snapshot-${snapshotId}`;
  const volumeLabels = { [LABEL_SNAPSHOT_ID]: snapshotId };

  beforeAll(async () => {
    await run('bash', [join(SHARED, 'env', 'extra-engines.sh'), '1'], { timeout: 180_000 });
    const docker = main as Docker;
    await docker.createVolume({ Name: volume, Labels: { ...volumeLabels, [LABEL_INSTANCE]: instanceId } });
    await inVolume(docker, volume, 'mkdir -p /volume/workspace && echo moved-with-it > /volume/workspace/notes.txt && chown -R 1000:1000 /volume/workspace && chmod 640 /volume/workspace/notes.txt');
    const source = await docker.createContainer({ Image: TEST_BASE_IMAGE, Entrypoint: ['sh', '-c', 'echo in-the-image > /marker'], Cmd: [] });
    await source.start();
    await source.wait();
    await source.commit({ repo: 'sandbox-server/snapshot', tag: snapshotId, changes: `LABEL ${LABEL_INSTANCE}=${instanceId} ${LABEL_SNAPSHOT_ID}=${snapshotId}` });
    await source.remove({ force: true });
  });

  afterAll(async () => {
    for (const docker of [main as Docker, e1]) await removeInstanceResources(docker, instanceId);
  });

  it('carries the image (same id) and the volume (same files, owners, modes and labels), and leaves no helper behind', async () => {
    const progress: string[] = [];
    await copySnapshot(
      { from: main as Docker, to: e1, helperImage: TEST_BASE_IMAGE, instanceId, onProgress: (line) => progress.push(line) },
      { id: snapshotId, image, volume, volumeLabels },
    );

    const [sourceImage, copiedImage] = await Promise.all([(main as Docker).getImage(image).inspect(), e1.getImage(image).inspect()]);
    expect(copiedImage.Id).toBe(sourceImage.Id);
    expect(copiedImage.Config.Labels?.[LABEL_SNAPSHOT_ID]).toBe(snapshotId);
    const copiedVolume = await e1.getVolume(volume).inspect();
    expect(copiedVolume.Labels).toMatchObject({ [LABEL_SNAPSHOT_ID]: snapshotId, [LABEL_INSTANCE]: instanceId });
    const listing = await inVolume(e1, volume, 'cat /volume/workspace/notes.txt && stat -c "%u:%g %a" /volume/workspace/notes.txt');
    expect(listing).toContain('moved-with-it');
    expect(listing).toContain('1000:1000 640');

    for (const docker of [main as Docker, e1]) {
      const helpers = await docker.listContainers({ all: true, filters: { label: [`${LABEL_INSTANCE}=${instanceId}`, LABEL_VOLUME_COPY] } });
      expect(helpers).toEqual([]);
    }
    expect(progress).toEqual(expect.arrayContaining([`copied ${image}`, `copied volume ${volume}`]));
  });

  it('refuses, for good, a snapshot whose volume is gone on the source, creating nothing', async () => {
    const missing = { id: snapshotId, image, volume: `${volume}-missing`, volumeLabels };
    const copying = copySnapshot({ from: main as Docker, to: e1, helperImage: TEST_BASE_IMAGE, instanceId, onProgress: () => undefined }, missing);
    await expect(copying).rejects.toMatchObject({ name: 'RuntimeError', final: true });
    for (const docker of [main as Docker, e1]) {
      await expect(docker.getVolume(missing.volume).inspect()).rejects.toMatchObject({ statusCode: 404 });
      const helpers = await docker.listContainers({ all: true, filters: { label: [`${LABEL_INSTANCE}=${instanceId}`, LABEL_VOLUME_COPY] } });
      expect(helpers).toEqual([]);
    }
  });
});
