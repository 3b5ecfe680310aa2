/**
 * How the Docker driver reads an engine's refusals of an unpause, against a stand-in engine on a
 * unix socket: the answers a loaded dockerd 20.10 gives cannot be provoked on demand.
 */
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDockerRuntime } from '../../../src/sandbox-server/runtime/docker.js';
import { RuntimeError } from '../../../src/sandbox-server/runtime/runtime.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';

/** Container id -> what the stand-in engine answers to its unpause: [status, message]. */
const UNPAUSE_ANSWERS: Record<string, [number, string]> = {
  thawed: [500, 'Cannot unpause container thawed: cannot resume a running process: unknown'],
  'not-paused': [409, 'Container not-paused is not paused'],
  broken: [500, 'Cannot unpause container broken: cgroup freezer: permission denied: unknown'],
};

describe('the Docker driver unpausing', () => {
  let dir: string;
  let engine: Server;
  let runtime: ReturnType<typeof createDockerRuntime>;

  beforeAll(async () => {
    dir = await makeTempDir();
    const socketPath = join(dir, 'docker.sock');
    engine = createServer((request, response) => {
      const id = /^\/containers\/([^/]+)\/unpause$/.exec(request.url ?? '')?.[1];
      const [status, message] = (id && UNPAUSE_ANSWERS[id]) || [404, 'page not found'];
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ message }));
    });
    await new Promise<void>((resolve) => engine.listen(socketPath, resolve));
    runtime = createDockerRuntime({ instanceId: 'unpause-test', docker: new Docker({ socketPath }), readRoutes: async () => '' });
  });
  afterAll(async () => {
    await new Promise((resolve) => engine?.close(resolve));
    await removeDir(dir);
  });

  it('takes runc finding the process running as done: the container runs, as asked', async () => {
    await expect(runtime.unpause('thawed')).resolves.toBeUndefined();
  });

  it('takes "is not paused" as done', async () => {
    await expect(runtime.unpause('not-paused')).resolves.toBeUndefined();
  });

  it('still fails on any other refusal', async () => {
    await expect(runtime.unpause('broken')).rejects.toBeInstanceOf(RuntimeError);
  });
});
