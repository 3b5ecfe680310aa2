import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadInitialEnv } from '../../../src/agent-server/initial-env.js';
import { createSecretVault } from '../../../src/agent-server/secrets/secret-vault.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';

/** The agent-server's side of a spec's secret initial_env: read from the file, masked in every conversation. */
describe('secret initial_env in the agent-server', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await makeTempDir('initial-env-');
  });
  afterEach(() => removeDir(dir));

  it('sets every entry and returns the secret values, from the file with secrets and from the plain one', async () => {
    const file = join(dir, 'initial-env.json');
    await writeFile(file, JSON.stringify({ env: { MODE: 'test', API_TOKEN: 'tok-31aa07' }, secret: ['API_TOKEN', 'GONE'] }));
    const env: NodeJS.ProcessEnv = {};
    const secret = await loadInitialEnv(env, file);
    expect(env).toMatchObject({ MODE: 'test', API_TOKEN: 'tok-31aa07' });
    expect(secret).toEqual(['tok-31aa07']);
    const vault = createSecretVault({}, secret);
    expect(vault.maskText('printed tok-31aa07')).toBe('printed <secret_hidden>');

    await writeFile(file, JSON.stringify({ PLAIN: 'yes' }));
    const plain: NodeJS.ProcessEnv = {};
    expect(await loadInitialEnv(plain, file)).toEqual([]);
    expect(plain).toEqual({ PLAIN: 'yes' });
  });
});
