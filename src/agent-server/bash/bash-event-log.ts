/**
 * The bash events of one agent-server (OpenHands' BashEventService): every command started through
 * /api/bash and its output, in memory for search and mirrored to an NDJSON file so they survive a
 * restart. Appends are written in order through one chain; a torn last line (a crash mid-write) is
 * skipped at load. Listeners (the /sockets/bash-events subscribers) hear each event once stored.
 */
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { timestampMillis } from '../../events/index.js';
import { validationError } from '../../errors/index.js';
import type { EventSortOrder } from '../../contracts/event-sort-order.js';
import type { Page } from '../../contracts/paging.js';
import { logger } from '../../logger.js';
import { createSerialQueue } from '../agent/tools/serial-queue.js';
import { BashEventSchema, type BashEvent } from '../../contracts/agent-server/bash.js';

export interface BashEventQuery {
  kind?: BashEvent['kind'];
  commandId?: string;
  /** Epoch milliseconds, inclusive. */
  timestampGte?: number;
  /** Epoch milliseconds, exclusive. */
  timestampLt?: number;
  /** Only BashOutputs whose order is above this. */
  orderGt?: number;
  sortOrder: EventSortOrder;
  pageId?: string;
  limit: number;
}

export class BashEventLog {
  private events: BashEvent[] = [];
  private readonly byId = new Map<string, BashEvent>();
  private readonly listeners = new Set<(event: BashEvent) => void>();
  private readonly serially = createSerialQueue();

  private constructor(private readonly file: string) {}

  static async open(file: string): Promise<BashEventLog> {
    const log = new BashEventLog(file);
    await mkdir(dirname(file), { recursive: true });
    const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return '';
      throw error;
    });
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const parsed = BashEventSchema.safeParse(safeJson(line));
      if (parsed.success) log.remember(parsed.data);
      else logger.warn({ file }, 'bash events: skipped a line that is not a bash event');
    }
    return log;
  }

  /** Stores the event, then tells the listeners. */
  async append(event: BashEvent): Promise<void> {
    await this.serially(() => appendFile(this.file, `${JSON.stringify(event)}\n`));
    this.remember(event);
    for (const listener of this.listeners) listener(event);
  }

  get(id: string): BashEvent | undefined {
    return this.byId.get(id);
  }

  /** Every stored event, oldest first: what a `resend_mode=all` subscriber is sent first. */
  all(): readonly BashEvent[] {
    return this.events;
  }

  search(query: BashEventQuery): Page<BashEvent> {
    const matching = this.events.filter((event) => matches(event, query));
    if (query.sortOrder === 'TIMESTAMP_DESC') matching.reverse();
    let start = 0;
    if (query.pageId !== undefined) {
      start = matching.findIndex((event) => event.id === query.pageId);
      if (start < 0) throw validationError('query', ['page_id'], 'page_id names no event of this search');
    }
    const items = matching.slice(start, start + query.limit);
    const next = matching[start + query.limit];
    return { items, next_page_id: next?.id ?? null };
  }

  /** Removes every event, on disk too, and says how many there were. */
  async clear(): Promise<number> {
    await this.serially(() => writeFile(this.file, ''));
    const count = this.events.length;
    this.events = [];
    this.byId.clear();
    return count;
  }

  subscribe(listener: (event: BashEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private remember(event: BashEvent): void {
    this.events.push(event);
    this.byId.set(event.id, event);
  }
}

function matches(event: BashEvent, query: BashEventQuery): boolean {
  if (query.kind !== undefined && event.kind !== query.kind) return false;
  const commandId = event.kind === 'BashCommand' ? event.id : event.command_id;
  if (query.commandId !== undefined && commandId !== query.commandId) return false;
  const millis = timestampMillis(event.timestamp);
  if (query.timestampGte !== undefined && millis < query.timestampGte) return false;
  if (query.timestampLt !== undefined && millis >= query.timestampLt) return false;
  if (query.orderGt !== undefined && (event.kind !== 'BashOutput' || event.order <= query.orderGt)) return false;
  return true;
}

function safeJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}
