/**
 * Clone at start beside its floor, for the clone and images benches. A repository of CLONE_FILES
 * Python files sits on a git server on 127.0.0.1 (smart HTTP behind basic auth, as the tests start
 * it); the floor is a plain `git clone` of it on this machine; ours is the start task's repository
 * step (prepareRepository: the clone on the control plane, then streamed into the sandbox's
 * agent-server and unpacked there), split into those two phases. Rounds alternate the two.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { AgentClient } from '../src/sandbox-server/agent-client.js';
import { prepareRepository } from '../src/sandbox-server/services/repositories/repository-steps.js';
import { startGitServer } from '../test/helpers/git-server.js';
import { makeTempDir, removeDir } from '../test/helpers/temp-dir.js';
import { formatMs, formatRatio, percentile, printTable } from './measure.js';

const TOKEN = 'bench-git-token-0123456789';
export const CLONE_FILES = 2_000;
const FILE_BYTES = 1_214;

export interface CloneSamples {
  floor: number[];
  ours: number[];
  /** Ours, split: the clone on the control plane, and the copy into the sandbox. */
  clone: number[];
  copy: number[];
}

/** `rounds` of the floor and ours, alternating; ours clones into `workspaceOf(round)` through `client`. */
export async function measureCloneAtStart(client: AgentClient, workspaceOf: (round: number) => string, rounds: number): Promise<CloneSamples> {
  const git = await startGitServer({ username: 'git', password: TOKEN });
  const root = await makeTempDir('bench-clone-');
  const samples: CloneSamples = { floor: [], ours: [], clone: [], copy: [] };
  try {
    const files: Record<string, string> = {};
    for (let i = 0; i < CLONE_FILES; i++) files[`src/module-${Math.floor(i / 100)}/file-${i}.py`] = `# file ${i}\n${'x = 1\n'.repeat(200)}`;
    const url = await git.addRepository('bench', files);
    const authed = url.replace('http://', `http://git:${TOKEN}@`);
    const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
    for (let round = 0; round < rounds; round++) {
      // Asynchronously: the git server answers from this process.
      let began = performance.now();
      await promisify(execFile)('git', ['clone', '-q', authed, join(root, `plain-${round}`)], { env });
      samples.floor.push(performance.now() - began);
      began = performance.now();
      const { timings } = await prepareRepository(client, {
        request: { selected_repository: url },
        secrets: { GIT_TOKEN: TOKEN },
        workspace: workspaceOf(round),
        signal: new AbortController().signal,
      });
      samples.ours.push(performance.now() - began);
      samples.clone.push(timings.cloneMs);
      samples.copy.push(timings.copyMs);
    }
    return samples;
  } finally {
    await git.close();
    await removeDir(root);
  }
}

/** The figure and its phases, p50s. */
export function printCloneAtStart(samples: CloneSamples, where: string): void {
  const p50 = (values: number[]) => percentile(values, 0.5);
  console.log(`\nclone at start into ${where}: a repository of ${CLONE_FILES} files (${Math.round((CLONE_FILES * FILE_BYTES) / 1e6)} MB), ${samples.ours.length} rounds alternating`);
  printTable(
    ['figure', 'ours p50', 'ours p95', 'floor p50', 'floor p95', 'p50 ratio', 'goal'],
    [
      [
        'clone at start: repository step beside `git clone`',
        formatMs(p50(samples.ours)),
        formatMs(percentile(samples.ours, 0.95)),
        formatMs(p50(samples.floor)),
        formatMs(percentile(samples.floor, 0.95)),
        formatRatio(p50(samples.ours) / p50(samples.floor)),
        '<= 1.2x',
      ],
    ],
  );
  printTable(
    ['phase (p50)', 'ours', 'floor'],
    [
      ['clone (control plane: git clone, identity, helper)', formatMs(p50(samples.clone)), formatMs(p50(samples.floor))],
      ['copy (tar streamed into the sandbox, unpacked as the agent)', formatMs(p50(samples.copy)), '-'],
    ],
  );
}
