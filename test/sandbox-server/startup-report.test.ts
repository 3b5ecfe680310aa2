import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { terminalStartupReport } from '../../src/sandbox-server/startup-report.js';
import { ensureBuilt } from '../helpers/build.js';
import { connectDocker, TEST_BASE_IMAGE, testInstanceId } from '../helpers/docker.js';
import { freePort } from '../helpers/processes.js';
import { makeTempDir, removeDir } from '../helpers/temp-dir.js';

const docker = await connectDocker();
const SERVER = join(import.meta.dirname, '..', '..', 'dist', 'sandbox-server.js');

/** The built control plane's start-up as a log collector sees it (its output is no terminal). */
describe.runIf(docker)('start-up progress and summary', { timeout: 240_000 }, () => {
  let child: ChildProcess | undefined;
  let dataDir: string | undefined;
  beforeAll(() => ensureBuilt(), 120_000);
  afterEach(async () => {
    if (child?.pid !== undefined && child.exitCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      process.kill(-child.pid, 'SIGTERM');
      await exited;
    }
    if (dataDir) await removeDir(dataDir);
  });

  /** Starts the server and resolves to its stdout once `until` matches it. */
  async function startUntil(until: RegExp): Promise<string> {
    dataDir = await makeTempDir('startup-report-');
    const env = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', PORT: String(await freePort()), SANDBOX_SERVER_INSTANCE: testInstanceId(), AGENT_SERVER_IMAGE: TEST_BASE_IMAGE, LOG_LEVEL: 'info' };
    child = spawn(process.execPath, [SERVER], { env, stdio: ['ignore', 'pipe', 'inherit'], detached: true });
    let output = '';
    return new Promise((resolve, reject) => {
      child!.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8');
        if (until.test(output)) resolve(output);
      });
      child!.once('exit', (code) => reject(new Error(`the server exited (${code}) before its summary:\n${output}`)));
    });
  }

  it('writes JSON lines when its output is no terminal, the summary among them', async () => {
    const output = await startUntil(/sandbox-server listening.*\n/);
    const lines = output.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((line) => line.msg)).toContain('registering the Docker engines');
    const summary = lines.find((line) => line.msg === 'sandbox-server listening');
    expect(summary).toMatchObject({ auth: false, engines: [expect.objectContaining({ name: 'local', runtimes: expect.arrayContaining(['runc']) })] });
    expect(String(summary?.database)).toMatch(/^PGlite in /);
  });
});

describe('start-up on a terminal', () => {
  it('shows each step with the time since start, then where to go, the database, the engines and their runtimes, and whether auth is on', () => {
    let text = '';
    let clock = 0;
    const report = terminalStartupReport((written) => (text += written), () => clock);
    report.step('opening the database (PGlite in /data/pglite) and applying its migrations');
    clock = 2_500;
    report.ready({
      url: 'http://127.0.0.1:3000',
      database: 'PGlite in /data/pglite',
      installation: 'f00',
      instance: 'default',
      replica: 'the only replica',
      replicas: 'this one only: set DATABASE_URL to run several',
      engines: [{ name: 'local', dockerUrl: 'unix:///var/run/docker.sock', runtimes: ['runc', 'runsc'] }, { name: 'far', dockerUrl: 'tcp://10.0.0.2:2376', runtimes: null }],
      defaultRuntime: 'runsc',
      auth: false,
    });
    expect(text).toBe(
      [
        '  0.0s  opening the database (PGlite in /data/pglite) and applying its migrations',
        '  2.5s  ready',
        '',
        'sandbox-server is listening on http://127.0.0.1:3000',
        '  API              http://127.0.0.1:3000/api/v1',
        '  Docs             http://127.0.0.1:3000/docs',
        '  Database         PGlite in /data/pglite',
        '  Installation     f00 (instance label default)',
        '  Replicas         this one only: set DATABASE_URL to run several',
        '  Engines          local (unix:///var/run/docker.sock): runtimes runc, runsc',
        '                   far (tcp://10.0.0.2:2376): runtimes unknown, the engine did not answer',
        '  Default runtime  runsc',
        '  Auth             OFF: anyone who can reach this address controls the sandboxes (set SANDBOX_SERVER_API_KEYS)',
        '',
        '',
      ].join('\n'),
    );
  });
});
