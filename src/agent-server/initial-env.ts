import { readFile } from 'node:fs/promises';
import { INITIAL_ENV_FILE, InitialEnvSchema } from '../contracts/agent-server/initial-env.js';

/**
 * Adds the spec's `initial_env` (INITIAL_ENV_FILE, when the control plane wrote one) to `env`, this
 * process's environment, where the agent's processes inherit it. Set after start, the values stay
 * out of this process's own /proc/N/environ, which shows only what it was started with. Returns the
 * values of the secret entries, which every conversation masks.
 */
export async function loadInitialEnv(env: NodeJS.ProcessEnv, path = INITIAL_ENV_FILE): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const file = InitialEnvSchema.parse(JSON.parse(text));
  Object.assign(env, file.env);
  return file.secret.flatMap((name) => (file.env[name] === undefined ? [] : [file.env[name]]));
}
