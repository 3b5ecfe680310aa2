import type { ChildProcess } from 'node:child_process';
import type { z } from 'zod';
import { type Answer, readAnswer } from './answer.js';
import { TEST_BASE_IMAGE } from './docker.js';
import { startBuiltControlPlane, stopProcess } from './processes.js';

/**
 * The built control plane (dist/sandbox-server.js) as its own process on `port`, answering /alive,
 * with the settings the fault suites share: quick sweeps, a short orphan grace, and the base image
 * as the agent-server image (an image it did not build is left alone, so nothing is built). `env`
 * adds the database, instance and anything else a suite needs; `onStdout` gets its log lines.
 */
export function spawnControlPlane(port: number, env: Record<string, string>, onStdout?: (text: string) => void): Promise<ChildProcess> {
  const settings = {
    AGENT_SERVER_IMAGE: TEST_BASE_IMAGE,
    MAX_RUNNING_SANDBOXES: '100',
    RECONCILE_INTERVAL_MS: '1000',
    ORPHAN_GRACE_SECONDS: '2',
    LOG_LEVEL: 'warn',
  };
  return startBuiltControlPlane(port, { ...settings, ...env }, 60_000, onStdout);
}

/** SIGKILLs the process, if it still runs, and resolves once it has exited. */
export function killProcess(child: ChildProcess | undefined): Promise<void> {
  return stopProcess(child, 'SIGKILL');
}

/** A control plane's answer: its status and JSON body (see readAnswer), its raw text and its headers. */
export interface ControlPlaneAnswer<T> extends Answer<T> {
  text: string;
  headers: Headers;
}

/** Calls a control plane listening on `target.port`; `call` of controlPlaneCaller. */
export type ControlPlaneCall = <S extends z.ZodType = z.ZodUnknown>(
  target: { port: number },
  method: string,
  path: string,
  body?: unknown,
  schema?: S,
) => Promise<ControlPlaneAnswer<z.output<S>>>;

/**
 * fetch() of a control plane started by spawnControlPlane, sending `key` as its API key and JSON
 * in: a JSON answer's body checked against `schema` (see readAnswer; `unknown` without one), any
 * other's undefined, and the text kept for what is not JSON (/metrics). A call that takes longer
 * than `timeoutMs` rejects with a TimeoutError.
 */
export function controlPlaneCaller(key: string, timeoutMs = 20_000): ControlPlaneCall {
  return async (target, method, path, body, schema) => {
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`http://127.0.0.1:${target.port}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    const json = response.headers.get('content-type')?.includes('application/json') === true;
    const answer = await readAnswer(new Response(json ? text : null, { status: response.status }), schema);
    return { ...answer, text, headers: response.headers };
  };
}
