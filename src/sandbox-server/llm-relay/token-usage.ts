/**
 * What an LLM answer says it used, read from the bytes the relay passes on without holding them
 * up: a whole JSON body, or each message of a stream (SSE `data:` lines, Ollama's JSON lines).
 * Every dialect reports usage in one of these shapes:
 *
 * - OpenAI Chat: `usage.prompt_tokens`, `usage.completion_tokens` (streamed: the last chunk, asked
 *   for with `stream_options.include_usage`);
 * - OpenAI Responses: `usage.input_tokens`, `usage.output_tokens` (streamed: `response.usage` of
 *   `response.completed`);
 * - Anthropic: `usage.input_tokens`, `usage.output_tokens` (streamed: `message.usage` of
 *   `message_start`, then the running output count in each `message_delta`'s `usage`);
 * - Ollama: `prompt_eval_count`, `eval_count` (streamed: on the last line, `done: true`).
 *
 * A stream's counts are the largest seen, since streamed counts are running totals.
 */

export interface TokenCounts {
  input: number;
  output: number;
}

/** The longest whole body read for its usage; a larger one is passed on and not counted. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;
/** Only messages carrying a count are parsed: most streamed messages are text deltas (OpenAI's with `"usage":null`). */
const MENTIONS_USAGE = /"usage":\s*\{|"(prompt_eval_count|eval_count)"/;

export function tokensOf(message: unknown): TokenCounts | null {
  if (!isRecord(message)) return null;
  if (typeof message.prompt_eval_count === 'number' || typeof message.eval_count === 'number') {
    return { input: count(message.prompt_eval_count), output: count(message.eval_count) };
  }
  const usage = [message.usage, recordAt(message.response)?.usage, recordAt(message.message)?.usage].find(isRecord);
  if (!usage) return null;
  return { input: count(usage.prompt_tokens ?? usage.input_tokens), output: count(usage.completion_tokens ?? usage.output_tokens) };
}

/** Reads usage from an answer's chunks as they pass. */
export class UsageMeter {
  readonly #streamed: boolean;
  #counts: TokenCounts = { input: 0, output: 0 };
  #chunks: Buffer[] = [];
  #bytes = 0;
  #partialLine = '';

  constructor(contentType: string) {
    this.#streamed = /text\/event-stream|ndjson/.test(contentType);
  }

  push(chunk: Buffer): void {
    if (!this.#streamed) {
      this.#bytes += chunk.length;
      if (this.#bytes <= MAX_BODY_BYTES) this.#chunks.push(chunk);
      return;
    }
    const lines = (this.#partialLine + chunk.toString('utf8')).split('\n');
    this.#partialLine = lines.pop() ?? '';
    for (const line of lines) this.#readLine(line);
  }

  /** The counts once the answer has ended. */
  finish(): TokenCounts {
    if (this.#streamed) {
      this.#readLine(this.#partialLine);
      this.#partialLine = '';
    } else if (this.#bytes <= MAX_BODY_BYTES && this.#chunks.length > 0) {
      this.#add(parsed(Buffer.concat(this.#chunks).toString('utf8')));
      this.#chunks = [];
    }
    return this.#counts;
  }

  #readLine(line: string): void {
    if (!MENTIONS_USAGE.test(line)) return;
    this.#add(parsed(line.replace(/^data:\s?/, '')));
  }

  #add(message: unknown): void {
    const tokens = tokensOf(message);
    if (tokens) this.#counts = { input: Math.max(this.#counts.input, tokens.input), output: Math.max(this.#counts.output, tokens.output) };
  }
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

function recordAt(value: unknown): Record<string, unknown> | undefined {
  return isRecord(value) ? value : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
