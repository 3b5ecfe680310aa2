import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LifecycleEventPageSchema } from '../../src/sandbox-server/models/lifecycle-event.js';
import { SandboxInfoSchema, type SandboxInfo } from '../../src/sandbox-server/models/sandbox.js';
import { SnapshotInfoSchema } from '../../src/sandbox-server/models/snapshot.js';
import { demultiplexLogs } from '../../src/sandbox-server/runtime/docker-logs.js';
import { dataVolumeNameFor, snapshotVolumeFor } from '../../src/sandbox-server/runtime/resource-names.js';
import { LABEL_INSTANCE, LABEL_SANDBOX_ID, LABEL_VOLUME_COPY } from '../../src/sandbox-server/runtime/runtime.js';
import { ValidationErrorSchema } from '../helpers/answer.js';
import { connectDocker, execAsRoot, removeInstanceResources } from '../helpers/docker.js';
import { buildE2eImage, E2E_IMAGE, type E2eControlPlane, startE2eControlPlane } from './harness.js';

const docker = await connectDocker();
const MB = 1024 * 1024;

interface EngineEvent {
  Action: string;
  id: string;
  timeNano: number;
  Actor: { Attributes: Record<string, string> };
}

/**
 * How a snapshot copies /data on the real engine: a first pass while the sandbox runs, a pause only
 * for the commit and what changed since, and SNAPSHOT_MAX_MB refusing a sandbox before any copy.
 */
describe.runIf(docker)('snapshot copies and limits on Docker, end to end', () => {
  const engine = docker as Docker;
  let cp: E2eControlPlane;
  let sandbox: SandboxInfo;
  let container: Docker.Container;

  /** Runs `script` as root in the sandbox's container; answers its output, failing on a non-zero exit. */
  const rootShell = async (script: string): Promise<string> => {
    const { output, exitCode } = await execAsRoot(container, script);
    expect(exitCode, output).toBe(0);
    return output;
  };
  /** Lists /v/probe of `volume` (kind, size, link target) and the small files' contents, from a throwaway container. */
  const probeListing = async (volume: string): Promise<string> => {
    const helper = await engine.createContainer({
      Image: E2E_IMAGE,
      Entrypoint: ['sh', '-c', "cd /v/probe && find . -mindepth 1 -path ./many -prune -o -printf '%P %y %s %l\\n' | sort && ls many | wc -l && cat kept kind/inner"],
      Labels: { [LABEL_INSTANCE]: cp.instanceId },
      HostConfig: { NetworkMode: 'none', Mounts: [{ Type: 'volume', Source: volume, Target: '/v', ReadOnly: true }] },
    });
    try {
      await helper.start();
      await helper.wait();
      return demultiplexLogs(Buffer.from(await helper.logs({ stdout: true, stderr: true })));
    } finally {
      await helper.remove({ force: true });
    }
  };
  const engineEvents = async (sinceSeconds: number): Promise<EngineEvent[]> => {
    const until = Math.ceil(Date.now() / 1000) + 1;
    const stream = (await engine.getEvents({
      since: sinceSeconds,
      until,
      filters: { type: ['container'], event: ['start', 'die', 'pause', 'unpause'], label: [`${LABEL_INSTANCE}=${cp.instanceId}`] },
    })) as unknown as NodeJS.ReadableStream;
    let text = '';
    for await (const chunk of stream) text += chunk.toString();
    return text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as EngineEvent);
  };

  beforeAll(async () => {
    await buildE2eImage();
    cp = await startE2eControlPlane({ SNAPSHOT_MAX_MB: '300' });
    const started = await cp.request('POST', '/api/v1/sandboxes', undefined, SandboxInfoSchema);
    sandbox = await cp.sandboxUntil(started.body.id, 'RUNNING');
    const [info] = await engine.listContainers({ filters: { label: [`${LABEL_SANDBOX_ID}=${sandbox.id}`] } });
    container = engine.getContainer(info!.Id);
    await rootShell(
      'mkdir -p /data/probe/many && cd /data/probe && head -c 140M /dev/zero > big && head -c 10M /dev/zero | split -a 4 -b 4k - many/part && echo gone > gone && echo kept > kept && echo file > kind && ln -s /nowhere link',
    );
  }, 180_000);
  afterAll(async () => {
    await cp?.close();
    if (cp) await removeInstanceResources(engine, cp.instanceId);
  });

  it('copies /data once while the sandbox runs, pauses it only for what changed since, and keeps those changes', async () => {
    const since = Math.floor(Date.now() / 1000) - 1;
    // Changes made while the first pass copies (its 2,560 small files give them the time): the pass
    // may or may not see each, or may fail on one it listed and then found gone; the paused pass
    // must settle them. Its helper is the second to start, after the one that measures.
    const changing = (async () => {
      const events = (await engine.getEvents({ filters: { type: ['container'], event: ['start'], label: [LABEL_VOLUME_COPY, `${LABEL_INSTANCE}=${cp.instanceId}`] } })) as unknown as NodeJS.ReadableStream & { destroy(): void };
      let started = 0;
      for await (const _ of events) if (++started === 2) break;
      events.destroy();
      await rootShell('cd /data/probe && rm gone && echo changed >> kept && rm kind && mkdir kind && echo inner > kind/inner && ln -sfn /elsewhere link');
    })();
    const startedAt = Date.now();
    const taken = await cp.request('POST', `/api/v1/sandboxes/${sandbox.id}/snapshots`, { name: 'two passes' }, SnapshotInfoSchema);
    const tookMs = Date.now() - startedAt;
    await changing;
    expect(taken.status).toBe(201);
    expect(taken.body.size_bytes).toBeGreaterThan(150 * MB);

    const events = await engineEvents(since);
    const helpers = events.filter((e) => e.Actor.Attributes[LABEL_VOLUME_COPY] !== undefined);
    const own = events.filter((e) => e.Actor.Attributes[LABEL_SANDBOX_ID] === sandbox.id);
    const at = (list: EngineEvent[], action: string, nth = 0) => list.filter((e) => e.Action === action)[nth]?.timeNano ?? Number.NaN;
    const pausedAt = at(own, 'pause');
    const unpausedAt = at(own, 'unpause');
    // A first helper measured, a second copied the whole volume, both before the pause; the third ran inside it.
    expect(at(helpers, 'die', 1)).toBeLessThan(pausedAt);
    expect(at(helpers, 'start', 2)).toBeGreaterThan(pausedAt);
    expect(at(helpers, 'die', 2)).toBeLessThan(unpausedAt);
    const pausedMs = (unpausedAt - pausedAt) / 1e6;
    const firstPassMs = (at(helpers, 'die', 1) - at(helpers, 'start', 1)) / 1e6;
    console.log(`snapshot of 150 MB of /data: ${tookMs} ms in all, first pass ${firstPassMs.toFixed(0)} ms, paused ${pausedMs.toFixed(0)} ms`);
    expect(pausedMs).toBeLessThan(tookMs);

    // The snapshot holds /data as it was at the pause: the changes made during the first pass included.
    const copied = await probeListing(snapshotVolumeFor(taken.body.id));
    expect(copied).toBe(await probeListing(dataVolumeNameFor(sandbox.id)));
    expect(copied).toContain('2560\nkept\nchanged\ninner\n');
    expect(copied).not.toMatch(/^gone /m);
    expect(copied).toContain('link l 10 /elsewhere');
    const [sandboxNow] = (await cp.request('GET', `/api/v1/sandboxes?id=${sandbox.id}`)).body as { status: string }[];
    expect(sandboxNow?.status).toBe('RUNNING');

    // Its progress, each phase its own event as it ended, before `snapshot.created`.
    const progress = await cp.request('GET', `/api/v1/events/search?sandbox_id=${sandbox.id}&type=snapshot.progress&type=snapshot.created`, undefined, LifecycleEventPageSchema);
    const ofSnapshot = progress.body.items.filter((e) => e.subject_id === taken.body.id);
    expect(ofSnapshot.map((e) => [e.type, e.status])).toEqual([
      ['snapshot.progress', 'measured'],
      ['snapshot.progress', 'copied'],
      ['snapshot.progress', 'paused'],
      ['snapshot.progress', 'committed'],
      ['snapshot.created', null],
    ]);
    const bytesOf = (phase: string) => Number.parseInt(ofSnapshot.find((e) => e.status === phase)?.status_detail ?? '', 10);
    expect(bytesOf('measured')).toBeGreaterThan(150 * MB);
    expect(bytesOf('copied')).toBeGreaterThan(140 * MB);
    expect(bytesOf('committed')).toBeGreaterThanOrEqual(0);
    // Recorded as they happened (one clock, the host's; 1 ms for rounding): the first two before the
    // engine paused the sandbox, the next two while it was paused.
    const recordedAt = (phase: string) => Date.parse(ofSnapshot.find((e) => e.status === phase)?.timestamp ?? '');
    expect(recordedAt('copied')).toBeLessThanOrEqual(pausedAt / 1e6 + 1);
    expect(recordedAt('paused')).toBeGreaterThanOrEqual(pausedAt / 1e6 - 1);
    expect(recordedAt('committed')).toBeLessThanOrEqual(unpausedAt / 1e6 + 1);
  }, 120_000);

  it('refuses with 422 and the reason a sandbox holding more than SNAPSHOT_MAX_MB, before copying anything', async () => {
    await rootShell('head -c 200M /dev/zero > /data/probe/more');
    const since = Math.floor(Date.now() / 1000) - 1;
    const refused = await cp.request('POST', `/api/v1/sandboxes/${sandbox.id}/snapshots`, { name: 'too big' }, ValidationErrorSchema);
    expect(refused.status).toBe(422);
    expect(refused.body.detail[0]).toMatchObject({ loc: ['path', 'id'], type: 'snapshot_too_large' });
    expect(refused.body.detail[0]?.msg).toMatch(/holds 3\d\d MB .* over the snapshot limit of 300 MB \(SNAPSHOT_MAX_MB\)/);
    const events = await engineEvents(since);
    // Never paused; no snapshot volume is left behind.
    expect(events.filter((e) => e.Action === 'pause')).toEqual([]);
    const volumes = (await engine.listVolumes({ filters: { label: [`${LABEL_INSTANCE}=${cp.instanceId}`, 'sandbox-server.snapshot'] } })).Volumes ?? [];
    expect(volumes.map((v) => v.Name)).toHaveLength(1);
  }, 60_000);
});
