/**
 * Clone at start without Docker: the start task's repository step against an agent-server in this
 * process on 127.0.0.1, beside a plain `git clone` from the same local git server (clone-fixture.ts).
 * Goal: at most 1.2x the floor. `npm run bench -- images` measures the same into a real sandbox.
 * CLONE_ROUNDS (default 5) sets the rounds.
 */
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { createAgentServerApp } from '../src/agent-server/app.js';
import { agentServerTarget, createAgentClient } from '../src/sandbox-server/agent-client.js';
import { makeTempDir, removeDir } from '../test/helpers/temp-dir.js';
import { measureCloneAtStart, printCloneAtStart } from './clone-fixture.js';
import { loadAverage } from './measure.js';

const ROUNDS = Number(process.env.CLONE_ROUNDS ?? 5);

export async function run(): Promise<void> {
  const root = await makeTempDir('bench-clone-agent-');
  const agent = await createAgentServerApp({ dataDir: join(root, 'data'), sessionKeys: [] });
  const server = await new Promise<ServerType>((resolve) => {
    const started = serve({ fetch: agent.app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(started));
  });
  try {
    const loadBefore = loadAverage();
    const client = createAgentClient(agentServerTarget('127.0.0.1', (server.address() as AddressInfo).port, ''));
    const samples = await measureCloneAtStart(client, (round) => join(root, `workspace-${round}`), ROUNDS);
    printCloneAtStart(samples, 'an agent-server in this process');
    console.log(`load average (1, 5, 15 min): ${loadBefore} before, ${loadAverage()} after`);
  } finally {
    server.close();
    await agent.close();
    await removeDir(root);
  }
}
