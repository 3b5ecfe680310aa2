/**
 * How the Docker driver tells an out-of-memory kill, against a stand-in engine on a unix socket:
 * dockerd 20.10 sets OOMKilled only when its `oom` event comes before the exit, and the order the
 * kernel and a loaded engine give cannot be provoked on demand.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDockerRuntime } from '../../../src/sandbox-server/runtime/docker.js';
import { LABEL_INSTANCE, LABEL_SANDBOX_ID, type RuntimeEvent } from '../../../src/sandbox-server/runtime/runtime.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';

const INSTANCE = 'oom-test';
const KILLED = 'a'.repeat(64);
const EXITED = 'b'.repeat(64);
const LABELS = { [LABEL_INSTANCE]: INSTANCE, [LABEL_SANDBOX_ID]: 'sandbox-1' };

/** What dockerd answers for an exited container whose OOMKilled flag it never set. */
function inspectOf(id: string) {
  return {
    Id: id,
    Config: { Labels: LABELS },
    State: { Status: 'exited', ExitCode: 137, OOMKilled: false, FinishedAt: new Date().toISOString() },
    NetworkSettings: { Ports: {} },
  };
}

function eventLine(id: string, action: string): string {
  return `${JSON.stringify({ Type: 'container', Action: action, id, Actor: { ID: id, Attributes: LABELS } })}\n`;
}

describe('the Docker driver and out-of-memory kills', () => {
  let dir: string;
  let engine: Server;
  let events: ServerResponse | undefined;
  let runtime: ReturnType<typeof createDockerRuntime>;

  beforeAll(async () => {
    dir = await makeTempDir();
    const socketPath = join(dir, 'docker.sock');
    engine = createServer((request, response) => {
      const path = new URL(request.url ?? '/', 'http://engine').pathname;
      if (path.endsWith('/events')) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.flushHeaders();
        events = response;
        return;
      }
      const id = /\/containers\/([^/]+)\/json$/.exec(path)?.[1];
      if (id === KILLED || id === EXITED) return response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(inspectOf(id)));
      response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'No such container' }));
    });
    await new Promise<void>((resolve) => engine.listen(socketPath, resolve));
    runtime = createDockerRuntime({ instanceId: INSTANCE, docker: new Docker({ socketPath }), readRoutes: async () => '' });
  });
  afterAll(async () => {
    events?.end();
    await new Promise((resolve) => engine?.close(resolve));
    await removeDir(dir);
  });

  it('reports a container the engine sent `oom` for after its `die` as killed for memory, until it is destroyed', async () => {
    const seen: RuntimeEvent[] = [];
    const stop = runtime.watch((event) => seen.push(event));
    try {
      await vi.waitFor(() => expect(events).toBeDefined());
      events?.write(eventLine(KILLED, 'die') + eventLine(KILLED, 'oom') + eventLine(EXITED, 'die'));
      await vi.waitFor(() => expect(seen.map((event) => event.action)).toEqual(['die', 'oom', 'die']));

      expect(await runtime.inspect(KILLED)).toMatchObject({ state: 'exited', exitCode: 137, oomKilled: true });
      expect(await runtime.inspect(EXITED)).toMatchObject({ state: 'exited', exitCode: 137, oomKilled: false });

      events?.write(eventLine(KILLED, 'destroy'));
      await vi.waitFor(() => expect(seen).toHaveLength(4));
      expect(await runtime.inspect(KILLED)).toMatchObject({ oomKilled: false });
    } finally {
      stop();
    }
  });
});
