/**
 * How the Docker driver settles a sandbox network's name conflict, against a stand-in engine on a
 * unix socket: a real engine refuses the loser of two concurrent creates before it lists the
 * winner's network, and that window cannot be widened on demand.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { join } from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDockerRuntime } from '../../../src/sandbox-server/runtime/docker.js';
import { LABEL_INSTANCE, LABEL_SANDBOX_ID, RuntimeError } from '../../../src/sandbox-server/runtime/runtime.js';
import { containerRequest } from '../../helpers/docker.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';

const INSTANCE = 'network-conflict-test';
const CONTAINER = 'c'.repeat(64);
const WINNER = 'n'.repeat(64);

async function bodyOf(request: IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of request) text += chunk;
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

describe('the Docker driver and a sandbox network created by another create at the same time', () => {
  let dir: string;
  let engine: Server;
  let runtime: ReturnType<typeof createDockerRuntime>;
  /** How many listings of the sandbox's networks come back empty before the winner's shows. */
  let listingsBeforeWinner = 0;
  let winnerOwner: string | undefined;
  let sandboxId = '';
  let containerNetwork: unknown;

  beforeAll(async () => {
    dir = await makeTempDir();
    const socketPath = join(dir, 'docker.sock');
    engine = createServer(async (request, response) => {
      const path = new URL(request.url ?? '/', 'http://engine').pathname;
      const answer = (status: number, body: unknown) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (path.endsWith('/networks/create')) return answer(409, { message: 'network with name taken already exists' });
      if (path.endsWith('/networks')) {
        if (listingsBeforeWinner-- > 0 || winnerOwner === undefined) return answer(200, []);
        const labels = { [LABEL_INSTANCE]: winnerOwner, [LABEL_SANDBOX_ID]: sandboxId };
        // The driver asks for this instance's networks only: a stranger's is filtered out.
        return answer(200, winnerOwner === INSTANCE ? [{ Id: WINNER, Name: 'winner', Created: new Date().toISOString(), Labels: labels }] : []);
      }
      if (path.endsWith('/containers/create')) {
        containerNetwork = ((await bodyOf(request)).HostConfig as { NetworkMode?: unknown } | undefined)?.NetworkMode;
        return answer(201, { Id: CONTAINER, Warnings: [] });
      }
      if (path.endsWith(`/containers/${CONTAINER}/start`)) return response.writeHead(204).end();
      if (path.endsWith(`/containers/${CONTAINER}/json`)) {
        const labels = { [LABEL_INSTANCE]: INSTANCE, [LABEL_SANDBOX_ID]: sandboxId };
        return answer(200, { Id: CONTAINER, Config: { Labels: labels }, State: { Status: 'running', ExitCode: 0, OOMKilled: false }, NetworkSettings: { Ports: {} } });
      }
      answer(404, { message: `no stand-in for ${path}` });
    });
    await new Promise<void>((resolve) => engine.listen(socketPath, resolve));
    runtime = createDockerRuntime({ instanceId: INSTANCE, docker: new Docker({ socketPath }), readRoutes: async () => '' });
  });
  afterAll(async () => {
    await new Promise((resolve) => engine?.close(resolve));
    await removeDir(dir);
  });

  it('waits for the winner to be listed and puts the container on its network', async () => {
    const request = containerRequest();
    sandboxId = request.sandboxId;
    winnerOwner = INSTANCE;
    listingsBeforeWinner = 3;
    containerNetwork = undefined;

    const created = await runtime.create(request);

    expect(created).toMatchObject({ containerId: CONTAINER, sandboxId, state: 'running' });
    expect(containerNetwork).toBe(WINNER);
  });

  it('refuses for good a name that a network this control plane does not own holds', async () => {
    const request = containerRequest();
    sandboxId = request.sandboxId;
    winnerOwner = 'someone-else';
    listingsBeforeWinner = 0;
    containerNetwork = undefined;

    const failure = await runtime.create(request).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(RuntimeError);
    expect(failure).toMatchObject({ final: true, message: expect.stringMatching(/does not own/) });
    expect(containerNetwork).toBeUndefined();
  });
});
