import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES } from '../../src/sandbox-server/config.js';

const MAIN = fileURLToPath(new URL('../../src/sandbox-server/main.ts', import.meta.url));

/** Runs the CLI as a user would (through tsx, from source) and collects what it printed. */
function run(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('sandbox-server CLI', () => {
  it('--help lists every setting and exits 0', async () => {
    const { code, stdout } = await run(['--help']);
    expect(code).toBe(0);
    for (const name of Object.keys(CONFIG_VARIABLES)) expect(stdout).toContain(name);
  });

  it('exits 2 with one line for a bad PORT', async () => {
    const { code, stdout, stderr } = await run([], { PORT: 'abc' });
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe('sandbox-server: invalid PORT="abc": Invalid input: expected number, received NaN\n');
  });

  it('exits 2 with one line for a bad LOG_LEVEL, before the logger could trip on it', async () => {
    const { code, stderr } = await run([], { LOG_LEVEL: 'loud' });
    expect(code).toBe(2);
    expect(stderr).toMatch(/^sandbox-server: invalid LOG_LEVEL="loud": [^\n]*\n$/);
  });

  it('exits 2 for an unknown command', async () => {
    const { code, stderr } = await run(['image', 'delete']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^sandbox-server: unknown command "image delete"\n/);
  });
});
