/**
 * Runs one fuzz property against a server: every operation of its /openapi.json, generated requests,
 * and after each answer the invariants of our contract: no 5xx, a FastAPI-shaped body on every
 * error (422 with loc/msg/type items, other 4xx with a string detail), and no answer slower than
 * REQUEST_DEADLINE_MS (a stall). Each failure names the seed that reproduces it (FUZZ_SEED=...).
 */
import fc from 'fast-check';
import { operationsOf } from './openapi-operations.js';
import { requestArbitrary, type FuzzRequest } from './request-arbitrary.js';
import type { Hint } from './schema-arbitrary.js';

const REQUEST_DEADLINE_MS = 15_000;

export interface FuzzTarget {
  name: string;
  /** The served OpenAPI document. */
  document: unknown;
  send(request: FuzzRequest): Promise<Response>;
  hint: Hint;
  /** Called with every JSON answer, e.g. to remember ids for later requests. */
  observe?(body: unknown): void;
  /**
   * 5xx answers that are right here: a 502 where the test made an upstream unreachable on purpose
   * (an agent's LLM on a closed port). They must still carry a FastAPI body.
   */
  expectedServerErrors?: number[];
}

export interface FuzzTally {
  requests: number;
  operations: number;
  byStatus: Record<number, number>;
}

/** The seed of this run: FUZZ_SEED when set (to reproduce a failure), otherwise a fresh one. */
export function fuzzSeed(): number {
  const fromEnv = process.env['FUZZ_SEED'];
  return fromEnv === undefined || fromEnv === '' ? Math.floor(Math.random() * 2 ** 31) : Number(fromEnv);
}

export async function fuzz(target: FuzzTarget, options: { numRuns: number; seed: number }): Promise<FuzzTally> {
  const operations = operationsOf(target.document);
  const tally: FuzzTally = { requests: 0, operations: operations.length, byStatus: {} };
  const ctx = { document: target.document, hint: target.hint };
  const arbitrary = fc.oneof(...operations.map((operation) => requestArbitrary(ctx, operation)));
  const property = fc.asyncProperty(arbitrary, async (request) => {
    const response = await withDeadline(target.send(request), request);
    tally.requests++;
    tally.byStatus[response.status] = (tally.byStatus[response.status] ?? 0) + 1;
    // A stream (server-sent events) never ends by itself: its status and headers are the answer.
    if (response.ok && /^text\/event-stream/.test(response.headers.get('content-type') ?? '')) {
      await response.body?.cancel();
      return;
    }
    const text = await withDeadline(response.text(), request);
    const problem = contractProblem(response, text, target.expectedServerErrors ?? []);
    if (problem) throw new Error(`${request.operation} (${request.method} ${request.url.slice(0, 300)}): ${problem}`);
    if (target.observe && /^application\/json/.test(response.headers.get('content-type') ?? '')) target.observe(JSON.parse(text));
  });
  try {
    await fc.assert(property, { numRuns: options.numRuns, seed: options.seed, endOnFailure: false, maxSkipsPerRun: 0 });
  } catch (error) {
    throw new Error(`fuzz ${target.name} failed; reproduce with FUZZ_SEED=${options.seed}\n${(error as Error).message}`, { cause: error });
  }
  return tally;
}

async function withDeadline<T>(promise: Promise<T>, request: FuzzRequest): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${request.operation} stalled: no answer within ${REQUEST_DEADLINE_MS} ms (${request.url.slice(0, 300)})`)), REQUEST_DEADLINE_MS);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** What is wrong with an answer, or undefined when it keeps the contract. */
export function contractProblem(response: Response, text: string, expectedServerErrors: number[] = []): string | undefined {
  const { status } = response;
  if (status >= 500 && !expectedServerErrors.includes(status)) return `answered ${status}: ${text.slice(0, 500)}`;
  if (status < 400) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `answered ${status} with a body that is not JSON: ${text.slice(0, 200)}`;
  }
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (status === 422) {
    const wellFormed =
      Array.isArray(detail) &&
      detail.length > 0 &&
      detail.every(
        (item: { loc?: unknown; msg?: unknown; type?: unknown }) =>
          Array.isArray(item.loc) && item.loc.every((part) => typeof part === 'string' || typeof part === 'number') && typeof item.msg === 'string' && typeof item.type === 'string',
      );
    return wellFormed ? undefined : `answered 422 with a body that is not {"detail":[{loc,msg,type}]}: ${text.slice(0, 300)}`;
  }
  return typeof detail === 'string' ? undefined : `answered ${status} with a body that is not {"detail": "..."}: ${text.slice(0, 300)}`;
}
