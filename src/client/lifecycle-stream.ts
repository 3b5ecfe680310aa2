/**
 * Following the control plane's lifecycle events (Server-Sent Events) across reconnects: each
 * connection asks for the events after the last one delivered, so a reader sees each event once,
 * in order, whatever the connection does.
 */
import { abortableSleep } from './abortable-sleep.js';
import { SandboxServerError, SandboxServerUnreachableError } from './errors.js';
import type { Transport } from './transport.js';
import type { LifecycleEvent, LifecycleEventType } from './types.js';

export interface FollowLifecycleEventsOptions {
  /** Start just after this event id; '0' replays everything retained. Required: see latestEventId. */
  afterEventId: string;
  sandboxId?: string;
  types?: readonly LifecycleEventType[];
  /** Ends the stream (the iterator returns). */
  signal?: AbortSignal;
  /** Failed connection attempts in a row before giving up. Default 10. */
  maxRetries?: number;
}

/** Answers worth retrying: a proxy in front, or the server restarting. */
const RETRYABLE_STATUSES = new Set([502, 503, 504]);
const RETRY_BASE_MS = 250;
const RETRY_MAX_MS = 5_000;

export async function* followLifecycleEvents(transport: Transport, options: FollowLifecycleEventsOptions): AsyncGenerator<LifecycleEvent> {
  const maxRetries = options.maxRetries ?? 10;
  let afterEventId = options.afterEventId;
  let failures = 0;
  while (!options.signal?.aborted) {
    let response: Response;
    try {
      response = await transport.request('streamLifecycleEvents', {
        query: { after_event_id: afterEventId, sandbox_id: options.sandboxId, type: options.types },
        signal: options.signal,
      });
    } catch (error) {
      if ((error as Error).name === 'AbortError') return;
      if (++failures > maxRetries) throw error;
      await abortableSleep(backoff(failures), options.signal);
      continue;
    }
    if (!response.ok) {
      const error = await refusal(response);
      if (!RETRYABLE_STATUSES.has(response.status) || ++failures > maxRetries) throw error;
      await abortableSleep(backoff(failures), options.signal);
      continue;
    }
    failures = 0;
    try {
      for await (const data of sseData(response.body)) {
        const event = JSON.parse(data) as LifecycleEvent;
        afterEventId = event.id;
        yield event;
      }
    } catch (error) {
      if ((error as Error).name === 'AbortError' || options.signal?.aborted) return;
      if (++failures > maxRetries) throw new SandboxServerUnreachableError(transport.baseUrl, { cause: error });
    }
    await abortableSleep(backoff(failures), options.signal);
  }
}

function backoff(failures: number): number {
  return Math.min(RETRY_BASE_MS * 2 ** failures, RETRY_MAX_MS);
}

/** The `data` of each message of an event stream; comments and other fields are skipped. */
async function* sseData(body: ReadableStream<Uint8Array> | null): AsyncGenerator<string> {
  if (!body) return;
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).replace(/^ /, ''));
      if (data.length > 0) yield data.join('\n');
    }
  }
}

async function refusal(response: Response): Promise<SandboxServerError> {
  const text = await response.text();
  let detail: string = text.trim() || `HTTP ${response.status}`;
  try {
    const parsed = JSON.parse(text) as { detail?: unknown };
    if (typeof parsed.detail === 'string') detail = parsed.detail;
  } catch {
    // Not JSON: keep the text.
  }
  return new SandboxServerError(response.status, detail, 'GET', '/api/v1/events/stream');
}
