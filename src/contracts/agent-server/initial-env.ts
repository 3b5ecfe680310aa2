import { z } from 'zod';

/**
 * Where the control plane puts a spec's `initial_env` in a container of our agent-server image,
 * instead of the container's environment: a file only root can read, written before the container
 * starts. In the environment, gVisor would let the agent read the values in the environ of the
 * container's init and of the agent-server (root processes); from the file, the agent-server hands
 * them only to the agent's own processes.
 */
export const INITIAL_ENV_FILE = '/etc/sandbox-server/initial-env.json';

/**
 * The file: the variables, or with secret ones `{env, secret}`, `secret` naming the entries whose
 * values the agent-server masks in what the agent prints (a spec's `secret_env`).
 */
export const InitialEnvSchema = z.union([
  z.record(z.string(), z.string()).transform((env) => ({ env, secret: [] as string[] })),
  z.object({ env: z.record(z.string(), z.string()), secret: z.array(z.string()) }),
]);
export type InitialEnvFile = z.input<typeof InitialEnvSchema>;
