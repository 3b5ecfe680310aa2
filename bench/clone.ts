/**
 * Clone at start: the start task's repository step (clone on the control plane with the token
 * through GIT_ASKPASS, tar, upload to the sandbox's agent-server, unpack as the agent) beside its
 * floor, a plain `git clone` of the same repository from the same local git server (smart HTTP
 * behind basic auth, as in the tests). The agent-server is an in-process one on 127.0.0.1. Goal:
 * at most 1.2x the floor.
 * Run: `npm run bench -- clone`.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { createAgentServerApp } from '../src/agent-server/app.js';
import { agentServerTarget, createAgentClient } from '../src/sandbox-server/agent-client.js';
import { prepareRepository } from '../src/sandbox-server/services/repositories/repository-steps.js';
import { startGitServer } from '../test/helpers/git-server.js';
import { makeTempDir, removeDir } from '../test/helpers/temp-dir.js';
import { formatMs, formatRatio, measure, printTable } from './measure.js';

const TOKEN = 'bench-git-token-0123456789';
const FILES = 2_000;
const RUNS = 5;

export async function run(): Promise<void> {
  const git = await startGitServer({ username: 'git', password: TOKEN });
  const root = await makeTempDir('bench-clone-');
  const agent = await createAgentServerApp({ dataDir: join(root, 'data'), sessionKeys: [] });
  const server = await new Promise<ServerType>((resolve) => {
    const started = serve({ fetch: agent.app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(started));
  });
  try {
    const files: Record<string, string> = {};
    for (let i = 0; i < FILES; i++) files[`src/module-${Math.floor(i / 100)}/file-${i}.py`] = `# file ${i}\n${'x = 1\n'.repeat(200)}`;
    const url = await git.addRepository('bench', files);
    const client = createAgentClient(agentServerTarget('127.0.0.1', (server.address() as AddressInfo).port, ''));
    // Asynchronously: the git server answers from this process.
    const floor = await measure(RUNS, (i) => {
      const authed = url.replace('http://', `http://git:${TOKEN}@`);
      return promisify(execFile)('git', ['clone', '-q', authed, join(root, `plain-${i}`)], { env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } });
    });
    const atStart = await measure(RUNS, (i) =>
      prepareRepository(client, {
        request: { selected_repository: url },
        secrets: { GIT_TOKEN: TOKEN },
        workspace: join(root, `workspace-${i}`),
        signal: new AbortController().signal,
      }),
    );
    console.log(`A repository of ${FILES} files (${Math.round((FILES * 1214) / 1e6)} MB), ${RUNS} clones each, medians`);
    printTable(
      ['plain git clone', 'clone at start', 'ratio (goal <= 1.2x)'],
      [[formatMs(floor.p50), formatMs(atStart.p50), formatRatio(atStart.p50 / floor.p50)]],
    );
  } finally {
    server.close();
    await agent.close();
    await git.close();
    await removeDir(root);
  }
}
