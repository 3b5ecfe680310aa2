import Docker from 'dockerode';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createCaMaterial } from '../../../src/sandbox-server/broker/certificate-authority.js';
import { imageMemory, refuseUnfit } from '../../../src/sandbox-server/runtime/docker-launch.js';
import { firstRegularFile, installTrustedCa, TRUST_BUNDLE_FILE } from '../../../src/sandbox-server/runtime/docker-trust.js';
import { LABEL_INSTANCE } from '../../../src/sandbox-server/runtime/index.js';
import { connectDocker, removeInstanceResources, testInstanceId } from '../../helpers/docker.js';

const docker = await connectDocker();
const instanceId = testInstanceId();
const ca = createCaMaterial('image memory test');
/** Bookworm with python3 and bash, no node (../shared/env/more-images.sh). */
const PYTHON_IMAGE = 'sandbox-python:local';
/** No bash. */
const BUSYBOX_IMAGE = 'sandbox-busybox:local';

/**
 * A create of a sandbox of an image the agent-server is brought into looks into the image (bash on
 * its PATH) and reads its CA stores (to add the installation's CA): once per image id, since an id's
 * content never changes, so that later starts of the image skip both.
 */
describe.skipIf(!docker)('what a runtime remembers of an image by id', () => {
  const engine = docker as Docker;
  const created = (image: string) =>
    engine.createContainer({ Image: image, Entrypoint: ['/nonexistent'], Cmd: [], Labels: { [LABEL_INSTANCE]: instanceId }, HostConfig: { NetworkMode: 'none' } });
  afterEach(() => vi.restoreAllMocks());
  afterAll(() => removeInstanceResources(engine, instanceId));

  it('looks into an image for bash and reads its CA stores once, and installs the same bundle in each container', async () => {
    const memory = imageMemory();
    const info = await engine.getImage(PYTHON_IMAGE).inspect();
    const launch = { env: info.Config.Env, imageId: info.Id };
    const lookups = vi.spyOn(Docker.Container.prototype, 'infoArchive');
    const reads = vi.spyOn(Docker.Container.prototype, 'getArchive');
    const bundles: (Buffer | undefined)[] = [];
    const calls: [number, number][] = [];
    for (let round = 0; round < 3; round++) {
      const container = await created(PYTHON_IMAGE);
      const before: [number, number] = [lookups.mock.calls.length, reads.mock.calls.length];
      await refuseUnfit(container, PYTHON_IMAGE, launch, memory);
      await installTrustedCa(container, ca.certPem, { id: info.Id, files: memory.files });
      calls.push([lookups.mock.calls.length - before[0], reads.mock.calls.length - before[1]]);
      const bundle = await container.getArchive({ path: TRUST_BUNDLE_FILE });
      const chunks: Buffer[] = [];
      for await (const chunk of bundle) chunks.push(chunk as Buffer);
      bundles.push(firstRegularFile(Buffer.concat(chunks)));
    }
    // The first looked into the image (at least once) and read its three stores; the others did neither.
    expect(calls[0]![0]).toBeGreaterThan(0);
    expect(calls[0]![1]).toBe(3);
    expect(calls.slice(1)).toEqual([
      [0, 0],
      [0, 0],
    ]);
    expect(bundles[0]?.toString('utf8')).toContain(ca.certPem.trim());
    expect(bundles[1]?.equals(bundles[0]!)).toBe(true);
    expect(bundles[2]?.equals(bundles[0]!)).toBe(true);
  });

  it('remembers no refusal: each container of an image without bash is looked into, refused and removed', async () => {
    const memory = imageMemory();
    const info = await engine.getImage(BUSYBOX_IMAGE).inspect();
    for (let round = 0; round < 2; round++) {
      const container = await created(BUSYBOX_IMAGE);
      await expect(refuseUnfit(container, BUSYBOX_IMAGE, { env: info.Config.Env, imageId: info.Id }, memory)).rejects.toThrow(/has no bash/);
      await expect(container.inspect()).rejects.toMatchObject({ statusCode: 404 });
    }
    expect(memory.fit.size).toBe(0);
  });
});
