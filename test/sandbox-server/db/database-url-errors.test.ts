import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../../helpers/build.js';
import { freePort, runBuiltControlPlane } from '../../helpers/processes.js';

const adminUrl = process.env.DATABASE_URL;

/** The built control plane started with a DATABASE_URL it cannot use says why, and never prints the password. */
describe.runIf(adminUrl)('DATABASE_URL failures at start', { timeout: 120_000 }, () => {
  const PASSWORD = 'not-the-password-4711';
  beforeAll(() => ensureBuilt(), 120_000);

  async function start(url: string): Promise<string> {
    const { code, stderr } = await runBuiltControlPlane([], { DATABASE_URL: url, PORT: '0', LOG_LEVEL: 'warn' }, 60_000);
    expect(code).toBe(1);
    expect(stderr).not.toContain(PASSWORD);
    expect(stderr).not.toContain('Failed query');
    return stderr;
  }

  it('names a failed authentication', async () => {
    const url = new URL(adminUrl!);
    url.password = PASSWORD;
    const stderr = await start(url.toString());
    expect(stderr).toContain(`cannot use the database at postgres://${url.username}:***@${url.host}`);
    expect(stderr).toContain('authentication failed');
  });

  it('names a database that does not exist, and how to create it', async () => {
    const url = new URL(adminUrl!);
    url.pathname = '/no_such_database_for_this_test';
    const stderr = await start(url.toString());
    expect(stderr).toContain('the database does not exist');
    expect(stderr).toContain('createdb no_such_database_for_this_test');
  });

  it('names a port where nothing listens', async () => {
    const port = await freePort();
    const stderr = await start(`postgres://sandbox:${PASSWORD}@127.0.0.1:${port}/sandbox`);
    expect(stderr).toContain(`nothing accepts connections at 127.0.0.1:${port}`);
  });
});
