import { SandboxServerError } from '../client/index.js';
import { CliError } from './cli-error.js';

/** The call's result, with a 404 answer turned into `message` (which names what to fix). */
export async function orNotFound<T>(call: Promise<T>, message: string): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof SandboxServerError && error.status === 404) throw new CliError(message);
    throw error;
  }
}

export function noSandbox(id: string): string {
  return `no sandbox "${id}": list them with "sandboxctl sandboxes ls"`;
}

export function noSpec(id: string): string {
  return `no sandbox spec "${id}": list them with "sandboxctl specs ls"`;
}

export function noConversation(id: string): string {
  return `no conversation "${id}": list them with "sandboxctl conv ls"`;
}

export function noEngine(name: string): string {
  return `no engine "${name}": list them with "sandboxctl engines ls"`;
}

export function noSnapshot(id: string): string {
  return `no snapshot "${id}": list them with "sandboxctl snapshots ls"`;
}
