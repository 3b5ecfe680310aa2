import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { BashOutputSchema } from '../../src/contracts/agent-server/bash.js';
import { ConversationInfoSchema } from '../../src/contracts/agent-server/conversation-info.js';
import { pageSchema } from '../../src/contracts/paging.js';
import { EventSchema } from '../../src/events/index.js';
import { AppConversationSchema } from '../../src/sandbox-server/models/app-conversation.js';
import { LifecycleEventPageSchema } from '../../src/sandbox-server/models/lifecycle-event.js';
import { SandboxInfoSchema, type SandboxInfo } from '../../src/sandbox-server/models/sandbox.js';
import { SnapshotInfoSchema, SnapshotPageSchema } from '../../src/sandbox-server/models/snapshot.js';
import { dataVolumeNameFor, snapshotImageFor, snapshotVolumeFor } from '../../src/sandbox-server/runtime/resource-names.js';
import { createDockerRuntime } from '../../src/sandbox-server/runtime/index.js';
import { LABEL_INSTALLATION, LABEL_INSTANCE, LABEL_SNAPSHOT_ID, LABEL_VOLUME_COPY } from '../../src/sandbox-server/runtime/runtime.js';
import { ErrorDetailSchema, ValidationErrorSchema } from '../helpers/answer.js';
import { createTestDatabase, testDrivers } from '../helpers/database.js';
import { connectDocker, removeInstanceResources } from '../helpers/docker.js';
import { buildE2eImage, E2E_IMAGE, type E2eControlPlane, startE2eControlPlane } from './harness.js';

const docker = await connectDocker();
const SandboxBatchSchema = z.array(SandboxInfoSchema.nullable());
const message = (text: string) => ({ role: 'user', content: [{ type: 'text', text }] });

/**
 * Snapshots and forks on the real engine, under the default runtime (gVisor where the engine has
 * it), on PGlite and on PostgreSQL: one source sandbox with a file and a conversation serves every
 * test of a database, and the last one restarts the control plane on the same database to see its
 * snapshots adopted.
 */
describe.runIf(docker).each(testDrivers)('snapshots and forks on Docker, end to end (%s)', (driver) => {
  const engine = docker as Docker;
  let database: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  /** The control plane's database: its own PostgreSQL database, or (absent) PGlite in its data dir. */
  let databaseEnv: Record<string, string> = {};
  let cp: E2eControlPlane;
  let silentLlm: Server;
  let source: SandboxInfo;
  let conversationId: string;
  let eventIds: string[];

  const agent = (sandboxId: string, path: string) => `/api/v1/sandboxes/${sandboxId}/agent${path}`;
  const bash = async (sandboxId: string, command: string) =>
    (await cp.request('POST', agent(sandboxId, '/api/bash/execute_bash_command'), { command, timeout: 30 }, BashOutputSchema)).body;
  const conversationEventIds = async (sandboxId: string) => {
    const { status, body } = await cp.request('GET', agent(sandboxId, `/api/conversations/${conversationId}/events/search?limit=100`), undefined, pageSchema(EventSchema));
    expect(status).toBe(200);
    return body.items.map((e) => e.id);
  };
  const imageExists = (image: string) =>
    engine
      .getImage(image)
      .inspect()
      .then(
        () => true,
        () => false,
      );
  const volumeExists = (name: string) =>
    engine
      .getVolume(name)
      .inspect()
      .then(
        () => true,
        () => false,
      );

  beforeAll(async () => {
    await buildE2eImage();
    if (driver === 'postgres') {
      database = await createTestDatabase();
      databaseEnv = { DATABASE_URL: database.url };
    }
    // An LLM on this host that never answers (reached through the LLM relay): an agent that calls it is running when a fork is taken.
    silentLlm = createServer(() => undefined);
    await new Promise<void>((resolve) => silentLlm.listen(0, '127.0.0.1', resolve));
    cp = await startE2eControlPlane({ ...databaseEnv, LLM_MODEL: 'openai/scripted', LLM_BASE_URL: `http://127.0.0.1:${(silentLlm.address() as AddressInfo).port}/v1` });
    const started = await cp.request('POST', '/api/v1/sandboxes', undefined, SandboxInfoSchema);
    source = await cp.sandboxUntil(started.body.id, 'RUNNING');
    expect((await bash(source.id, 'echo from the source > /workspace/note.txt')).exit_code).toBe(0);
    const ready = await cp.request('POST', '/api/v1/app-conversations?wait=true', { sandbox_id: source.id, initial_message: message('remember me') }, AppConversationSchema);
    expect(ready.status).toBe(200);
    conversationId = ready.body.id;
    eventIds = await conversationEventIds(source.id);
    expect(eventIds.length).toBeGreaterThan(0);
  }, 240_000);
  afterAll(async () => {
    await cp?.close();
    silentLlm?.closeAllConnections();
    silentLlm?.close();
    if (cp) await removeInstanceResources(engine, cp.instanceId);
    await database?.drop();
  });

  it('snapshots a running sandbox and starts sandboxes from it with its files, events and event ids, each with its own key', async () => {
    const taken = await cp.request('POST', `/api/v1/sandboxes/${source.id}/snapshots`, { name: 'first' }, SnapshotInfoSchema);
    expect(taken.status).toBe(201);
    expect(taken.body).toMatchObject({ name: 'first', sandbox_id: source.id, sandbox_spec_id: expect.any(String) });
    expect(taken.body.size_bytes).toBeGreaterThan(0);
    const snapshot = taken.body;
    // The source runs on: it was paused only for the snapshot.
    expect((await cp.request('GET', `/api/v1/sandboxes?id=${source.id}`, undefined, SandboxBatchSchema)).body[0]?.status).toBe('RUNNING');
    expect((await bash(source.id, 'echo after > /workspace/later.txt')).exit_code).toBe(0);

    const started = await cp.request('POST', '/api/v1/sandboxes', { snapshot_id: snapshot.id }, SandboxInfoSchema);
    expect(started.status).toBe(200);
    expect(started.body).toMatchObject({ status: 'STARTING', sandbox_spec_id: snapshot.sandbox_spec_id });
    const fork = await cp.sandboxUntil(started.body.id, 'RUNNING');
    expect(fork.id).not.toBe(source.id);
    expect(fork.session_api_key).not.toBe(source.session_api_key);
    expect(await bash(fork.id, 'cat /workspace/note.txt')).toMatchObject({ exit_code: 0, stdout: 'from the source\n' });
    // Taken before later.txt was written.
    expect((await bash(fork.id, 'test -e /workspace/later.txt')).exit_code).not.toBe(0);
    expect(await conversationEventIds(fork.id)).toEqual(eventIds);
    // The fork's log goes on from there, apart from the source's.
    const sent = await cp.request('POST', agent(fork.id, `/api/conversations/${conversationId}/events`), message('only in the fork'));
    expect(sent.status).toBe(200);
    expect(await conversationEventIds(fork.id)).toHaveLength(eventIds.length + 1);
    expect(await conversationEventIds(source.id)).toEqual(eventIds);

    // Fork: snapshot + start in one call.
    const forked = await cp.request('POST', `/api/v1/sandboxes/${source.id}/fork`, { name: 'for the fork' }, SandboxInfoSchema);
    expect(forked.status).toBe(200);
    const second = await cp.sandboxUntil(forked.body.id, 'RUNNING');
    expect(await bash(second.id, 'cat /workspace/later.txt')).toMatchObject({ exit_code: 0, stdout: 'after\n' });
    expect(await conversationEventIds(second.id)).toEqual(eventIds);

    const listed = await cp.request('GET', `/api/v1/snapshots/search?sandbox_id=${source.id}`, undefined, SnapshotPageSchema);
    expect(listed.body.items.map((s) => s.name)).toEqual(['for the fork', 'first']);
    const paged = await cp.request('GET', `/api/v1/snapshots/search?sandbox_id=${source.id}&limit=1`, undefined, SnapshotPageSchema);
    expect(paged.body.items).toHaveLength(1);
    const next = await cp.request('GET', `/api/v1/snapshots/search?sandbox_id=${source.id}&limit=1&page_id=${paged.body.next_page_id}`, undefined, SnapshotPageSchema);
    expect(next.body).toEqual({ items: [snapshot], next_page_id: null });
    expect((await cp.request('GET', `/api/v1/snapshots?id=${snapshot.id}&id=unknown`)).body).toEqual([snapshot, null]);
    const events = await cp.request('GET', `/api/v1/events/search?type=snapshot.created&sandbox_id=${source.id}`, undefined, LifecycleEventPageSchema);
    expect(events.body.items.map((e) => e.subject_id)).toContain(snapshot.id);

    // A snapshot is kept while a sandbox started from it lives: the sandbox runs its image.
    const refused = await cp.request('DELETE', `/api/v1/snapshots/${snapshot.id}`, undefined, ErrorDetailSchema);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/delete them first/);
    expect((await cp.request('DELETE', `/api/v1/sandboxes/${fork.id}`)).status).toBe(200);
    const [image] = await engine.listImages({ filters: { label: [`${LABEL_SNAPSHOT_ID}=${snapshot.id}`] } });
    expect(image).toBeDefined();
    await vi.waitFor(async () => expect((await cp.request('DELETE', `/api/v1/snapshots/${snapshot.id}`)).status).toBe(200), {
      timeout: 30_000,
      interval: 200,
    });
    expect((await cp.request('GET', `/api/v1/snapshots?id=${snapshot.id}`)).body).toEqual([null]);
    await vi.waitFor(async () => expect(await imageExists(image!.Id)).toBe(false), { timeout: 30_000, interval: 200 });
    expect(await volumeExists(`sandbox-server-snapshot-${snapshot.id}`)).toBe(false);
    const deleted = await cp.request('GET', `/api/v1/events/search?type=snapshot.deleted&sandbox_id=${source.id}`, undefined, LifecycleEventPageSchema);
    expect(deleted.body.items.map((e) => e.subject_id)).toEqual([snapshot.id]);
    expect((await cp.request('DELETE', `/api/v1/snapshots/${snapshot.id}`)).status).toBe(404);
    await cp.request('DELETE', `/api/v1/sandboxes/${second.id}`);
  }, 180_000);

  it('starts a fork with the conversation that was running in the source paused, while the source runs on', async () => {
    const started = await cp.request(
      'POST',
      '/api/v1/app-conversations?wait=true',
      { sandbox_id: source.id, initial_message: { ...message('think it over'), run: true } },
      AppConversationSchema,
    );
    expect(started.status).toBe(200);
    const id = started.body.id;
    const statusIn = async (sandboxId: string) =>
      (await cp.request('GET', agent(sandboxId, `/api/conversations/${id}`), undefined, ConversationInfoSchema)).body.execution_status;
    await vi.waitFor(async () => expect(await statusIn(source.id)).toBe('running'), { timeout: 30_000, interval: 200 });

    const forked = await cp.request('POST', `/api/v1/sandboxes/${source.id}/fork`, {}, SandboxInfoSchema);
    expect(forked.status).toBe(200);
    const fork = await cp.sandboxUntil(forked.body.id, 'RUNNING');
    expect(await statusIn(fork.id)).toBe('paused');
    const events = await cp.request('GET', agent(fork.id, `/api/conversations/${id}/events/search?limit=100`), undefined, pageSchema(EventSchema));
    expect(events.body.items.map((e) => e.kind)).toContain('PauseEvent');
    expect(await statusIn(source.id)).toBe('running');

    expect((await cp.request('POST', agent(source.id, `/api/conversations/${id}/pause`))).status).toBe(200);
    expect((await cp.request('DELETE', `/api/v1/sandboxes/${fork.id}`)).status).toBe(200);
  }, 180_000);

  it('keeps a paused sandbox paused across its snapshot', async () => {
    await cp.request('POST', `/api/v1/sandboxes/${source.id}/pause`, {});
    await cp.sandboxUntil(source.id, 'PAUSED');
    const taken = await cp.request('POST', `/api/v1/sandboxes/${source.id}/snapshots`, undefined, SnapshotInfoSchema);
    expect(taken.status).toBe(201);
    expect(taken.body.name).toBeNull();
    const [container] = await engine.listContainers({ all: true, filters: { label: [`sandbox-server.id=${source.id}`] } });
    expect(container?.State).toBe('paused');
    expect((await cp.request('GET', `/api/v1/sandboxes?id=${source.id}`, undefined, SandboxBatchSchema)).body[0]?.status).toBe('PAUSED');
    await cp.request('POST', `/api/v1/sandboxes/${source.id}/resume`, {});
    await cp.sandboxUntil(source.id, 'RUNNING');
  }, 120_000);

  it('answers 404, 422 and 409 for unknown ids, bad input and sandboxes that cannot be snapshotted', async () => {
    expect(await cp.request('POST', '/api/v1/sandboxes/no-such-sandbox/snapshots', {})).toEqual({ status: 404, body: { detail: 'Sandbox not found' } });
    expect(await cp.request('POST', '/api/v1/sandboxes/no-such-sandbox/fork', {})).toEqual({ status: 404, body: { detail: 'Sandbox not found' } });
    expect(await cp.request('POST', '/api/v1/sandboxes', { snapshot_id: 'no-such-snapshot' })).toEqual({ status: 404, body: { detail: 'Snapshot not found' } });
    expect(await cp.request('DELETE', '/api/v1/snapshots/no-such-snapshot')).toEqual({ status: 404, body: { detail: 'Snapshot not found' } });

    const badName = await cp.request('POST', `/api/v1/sandboxes/${source.id}/snapshots`, { name: 5 }, ValidationErrorSchema);
    expect(badName.status).toBe(422);
    expect(badName.body.detail[0]).toMatchObject({ loc: ['body', 'name'], type: expect.any(String), msg: expect.any(String) });
    const extra = await cp.request('POST', `/api/v1/sandboxes/${source.id}/fork`, { snapshot: true });
    expect(extra.status).toBe(422);
    expect((await cp.request('GET', '/api/v1/snapshots/search?limit=0')).status).toBe(422);
    expect((await cp.request('GET', '/api/v1/snapshots/search?page_id=unknown')).status).toBe(422);

    const spec = await cp.request('POST', '/api/v1/sandbox-specs', { id: 'no-image', image: 'sandbox-server/no-such-image:none' });
    expect(spec.status).toBe(201);
    const broken = await cp.request('POST', '/api/v1/sandboxes', { sandbox_spec_id: 'no-image' }, SandboxInfoSchema);
    await cp.sandboxUntil(broken.body.id, 'ERROR');
    const refused = await cp.request('POST', `/api/v1/sandboxes/${broken.body.id}/snapshots`, {}, ErrorDetailSchema);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/ERROR/);

    const taken = (await cp.request('POST', `/api/v1/sandboxes/${source.id}/snapshots`, {}, SnapshotInfoSchema)).body;
    const otherSpec = await cp.request('POST', '/api/v1/sandboxes', { snapshot_id: taken.id, sandbox_spec_id: 'no-image' }, ValidationErrorSchema);
    expect(otherSpec.status).toBe(422);
    expect(otherSpec.body.detail[0]?.loc).toEqual(['body', 'sandbox_spec_id']);
    await cp.request('DELETE', `/api/v1/snapshots/${taken.id}`);
    await cp.request('DELETE', `/api/v1/sandboxes/${broken.body.id}`);
  }, 120_000);

  it("sweeps a spec's snapshots when the spec is deleted", async () => {
    expect((await cp.request('POST', '/api/v1/sandbox-specs', { id: 'swept', image: E2E_IMAGE })).status).toBe(201);
    const started = await cp.request('POST', '/api/v1/sandboxes', { sandbox_spec_id: 'swept' }, SandboxInfoSchema);
    await cp.sandboxUntil(started.body.id, 'RUNNING');
    const snapshot = (await cp.request('POST', `/api/v1/sandboxes/${started.body.id}/snapshots`, {}, SnapshotInfoSchema)).body;
    expect(await volumeExists(`sandbox-server-snapshot-${snapshot.id}`)).toBe(true);
    await cp.request('DELETE', `/api/v1/sandboxes/${started.body.id}`);
    await vi.waitFor(async () => expect((await cp.request('DELETE', '/api/v1/sandbox-specs/swept')).status).toBe(200), { timeout: 30_000, interval: 200 });

    expect((await cp.request('GET', `/api/v1/snapshots/search?sandbox_spec_id=swept`, undefined, SnapshotPageSchema)).body.items).toEqual([]);
    await vi.waitFor(
      async () => {
        expect(await volumeExists(`sandbox-server-snapshot-${snapshot.id}`)).toBe(false);
        expect(await engine.listImages({ filters: { label: [`${LABEL_SNAPSHOT_ID}=${snapshot.id}`] } })).toEqual([]);
      },
      { timeout: 30_000, interval: 200 },
    );
    const events = await cp.request('GET', `/api/v1/events/search?type=snapshot.deleted&sandbox_id=${started.body.id}`, undefined, LifecycleEventPageSchema);
    expect(events.body.items.map((e) => e.subject_id)).toEqual([snapshot.id]);
  }, 120_000);

  it('adopts its snapshots after a restart, and sweeps what a crash left behind: snapshot artifacts, restored volumes, volume copies', async () => {
    const snapshot = (await cp.request('POST', `/api/v1/sandboxes/${source.id}/snapshots`, { name: 'kept' }, SnapshotInfoSchema)).body;
    const { dataDir, instanceId, apiKey } = cp;
    // Leftovers of this installation carry its id, as everything it makes does; others' are never swept.
    const [made] = await engine.listContainers({ all: true, filters: { label: [`${LABEL_INSTANCE}=${instanceId}`, LABEL_INSTALLATION] } });
    const installationId = made!.Labels[LABEL_INSTALLATION]!;
    await cp.close({ keepData: true });
    // Left behind by a snapshot that never got its row (a crash between the engine and the database).
    const ghost = 'sandbox-server-snapshot-ghost';
    await engine.createVolume({ Name: ghost, Labels: { [LABEL_INSTANCE]: instanceId, [LABEL_INSTALLATION]: installationId, [LABEL_SNAPSHOT_ID]: 'ghost' } });
    // Left behind by a start from the snapshot that died between copying its volume and writing its row.
    const copyLabels = [`${LABEL_INSTANCE}=${instanceId}`, `${LABEL_SNAPSHOT_ID}=${snapshot.id}`, LABEL_VOLUME_COPY];
    const copyEvents = await engine.getEvents({ filters: { type: ['container'], event: ['create'], label: copyLabels } });
    const copiesSeen = new Promise<string>((resolve) => copyEvents.once('data', (chunk: Buffer) => resolve(chunk.toString())));
    const restored = dataVolumeNameFor('never-written');
    await createDockerRuntime({ instanceId, installationId, docker: engine, copyImage: E2E_IMAGE }).restoreVolume(
      { id: snapshot.id, image: snapshotImageFor(snapshot.id), volume: snapshotVolumeFor(snapshot.id) },
      { sandboxId: 'never-written', name: restored },
    );
    // The copy ran in a labelled container, so a crash during it leaves one a sweep finds: like this one.
    expect(JSON.parse(await copiesSeen).Actor.Attributes).toMatchObject({ [LABEL_VOLUME_COPY]: restored });
    (copyEvents as unknown as { destroy(): void }).destroy();
    const ended = await engine.createContainer({
      Image: E2E_IMAGE,
      Entrypoint: ['true'],
      Labels: { [LABEL_INSTANCE]: instanceId, [LABEL_INSTALLATION]: installationId, [LABEL_SNAPSHOT_ID]: snapshot.id, [LABEL_VOLUME_COPY]: 'sandbox-server-data-ended' },
    });
    await ended.start();
    await ended.wait();
    cp = await startE2eControlPlane({ ...databaseEnv, ORPHAN_GRACE_SECONDS: '1', LLM_MODEL: 'openai/scripted' }, { dataDir, instanceId, apiKey });

    await vi.waitFor(
      async () => {
        expect(await volumeExists(ghost)).toBe(false);
        expect(await volumeExists(restored)).toBe(false);
        expect(await engine.listContainers({ all: true, filters: { label: copyLabels } })).toEqual([]);
      },
      { timeout: 30_000, interval: 200 },
    );
    expect((await cp.request('GET', `/api/v1/snapshots?id=${snapshot.id}`)).body).toEqual([snapshot]);
    expect(await volumeExists(`sandbox-server-snapshot-${snapshot.id}`)).toBe(true);
    const started = await cp.request('POST', '/api/v1/sandboxes', { snapshot_id: snapshot.id }, SandboxInfoSchema);
    const fork = await cp.sandboxUntil(started.body.id, 'RUNNING');
    expect(await conversationEventIds(fork.id)).toEqual(eventIds);
  }, 120_000);
});
