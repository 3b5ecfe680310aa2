import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect, vi } from 'vitest';
import { TEST_BASE_IMAGE } from './docker.js';

const ROOT = join(import.meta.dirname, '..', '..');

/**
 * The built control plane (dist/sandbox-server.js) as its own process on `port`, answering /alive,
 * with the settings the fault suites share: quick sweeps, a short orphan grace, and the base image
 * as the agent-server image (an image it did not build is left alone, so nothing is built). `env`
 * adds the database, instance and anything else a suite needs.
 */
export async function spawnControlPlane(port: number, env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'sandbox-server.js')], {
    env: {
      ...process.env,
      PORT: String(port),
      AGENT_SERVER_IMAGE: TEST_BASE_IMAGE,
      MAX_RUNNING_SANDBOXES: '100',
      RECONCILE_INTERVAL_MS: '1000',
      ORPHAN_GRACE_SECONDS: '2',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await vi.waitFor(
    async () => {
      const response = await fetch(`http://127.0.0.1:${port}/alive`, { signal: AbortSignal.timeout(5_000) });
      expect(response.status).toBe(200);
    },
    { timeout: 60_000, interval: 100 },
  );
  return child;
}

/** SIGKILLs the process, if it still runs, and resolves once it has exited. */
export function killProcess(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}
