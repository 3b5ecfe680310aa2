import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { timestampMillis } from '../../../src/events/timestamp.js';
import type { EventFilter, EventSortOrder, StoredEvent } from '../../../src/agent-server/store/index.js';

/** A fresh directory under the OS temp dir, and its removal. */
export async function makeTempDir(): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'event-log-'));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Text of a MessageEvent's content, as the agent-server's searchable text is built. */
export function messageText(event: StoredEvent): string | null {
  if (event.kind !== 'MessageEvent') return null;
  const message = event.llm_message as { content: { type: string; text?: string }[] };
  return message.content.map((part) => part.text ?? '').join('\n');
}

export const KINDS = ['MessageEvent', 'ActionEvent', 'ObservationEvent', 'ConversationStateUpdateEvent', 'PauseEvent'];
export const SOURCES = ['user', 'agent', 'environment'];
const WORDS = ['Alpha', 'beta', 'GAMMA', 'delta', 'Straße', 'naïve', 'résumé', 'fix the bug', 'README', 'ünïcode'];
export const BASE_MS = Date.UTC(2024, 0, 1);

export interface EventMaker {
  next(overrides?: { timestampMs?: number }): StoredEvent;
}

/**
 * Random events of a few kinds and sources. Timestamps mostly advance but often tie and sometimes
 * jump back; half are written as Python's naive isoformat (read as UTC), half with a `Z`.
 */
export function eventMaker(random: () => number, idPrefix = 'ev'): EventMaker {
  let clock = BASE_MS;
  let serial = 0;
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]!;
  return {
    next(overrides = {}) {
      const roll = random();
      if (roll < 0.6) clock += Math.floor(random() * 2000);
      else if (roll < 0.65) clock -= Math.floor(random() * 60_000);
      const timestampMs = overrides.timestampMs ?? clock;
      const iso = new Date(timestampMs).toISOString();
      const timestamp = random() < 0.5 ? iso : `${iso.slice(0, -1)}${String(Math.floor(random() * 1000)).padStart(3, '0')}`;
      const kind = pick(KINDS);
      const id = `${idPrefix}-${(serial++).toString(36)}-${Math.floor(random() * 1e9).toString(36)}`;
      const base = { id, kind, source: pick(SOURCES), timestamp };
      if (kind === 'MessageEvent') {
        const words = Array.from({ length: 1 + Math.floor(random() * 4) }, () => pick(WORDS));
        return { ...base, llm_message: { role: 'user', content: [{ type: 'text', text: words.join(' ') }] } };
      }
      return { ...base, note: pick(WORDS) };
    },
  };
}

/** The answer of the reference implementation: filter everything, sort, in full. */
export function naiveSearch(events: readonly StoredEvent[], filter: EventFilter, sortOrder: EventSortOrder): StoredEvent[] {
  const body = filter.body?.toLowerCase();
  const matching = events
    .map((event, position) => ({ event, position, ms: timestampMillis(event.timestamp) }))
    .filter(({ event, ms }) => {
      if (filter.kind !== undefined && event.kind !== filter.kind) return false;
      if (filter.source !== undefined && event.source !== filter.source) return false;
      if (filter.timestampGte !== undefined && ms < filter.timestampGte) return false;
      if (filter.timestampLt !== undefined && ms >= filter.timestampLt) return false;
      if (body !== undefined) {
        const text = messageText(event);
        if (text === null || !text.toLowerCase().includes(body)) return false;
      }
      return true;
    })
    .sort((a, b) => a.ms - b.ms || a.position - b.position)
    .map(({ event }) => event);
  return sortOrder === 'TIMESTAMP' ? matching : matching.reverse();
}

/** A random filter over the fixtures' kinds, sources, words and time span (some parts absent). */
export function randomFilter(random: () => number, spanMs: number): EventFilter {
  const filter: EventFilter = {};
  if (random() < 0.4) filter.kind = random() < 0.9 ? KINDS[Math.floor(random() * KINDS.length)] : 'NoSuchKind';
  if (random() < 0.4) filter.source = SOURCES[Math.floor(random() * SOURCES.length)];
  if (random() < 0.3) filter.body = ['alpha', 'BETA', 'straSSe', 'STRASSE', 'Straße', 'NAÏVE', 'ü', 'fix the', 'nothing-like-this', 'e'][Math.floor(random() * 10)];
  if (random() < 0.4) filter.timestampGte = BASE_MS + Math.floor(random() * spanMs);
  if (random() < 0.4) filter.timestampLt = BASE_MS + Math.floor(random() * spanMs);
  return filter;
}
