import { describe, expect, it } from 'vitest';
import {
  EVENT_KINDS,
  EventKindSchema,
  EventSchema,
  EventSortOrderSchema,
  EventSourceSchema,
  isTimestamp,
} from '../../src/events/index.js';
import { eventCases } from './cases.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('event kinds', () => {
  it('EVENT_KINDS names exactly the members of the union, in order', () => {
    expect(EventSchema.options.map((option) => option.shape.kind.value)).toEqual([...EVENT_KINDS]);
    expect(eventCases.map((c) => c.name)).toEqual([...EVENT_KINDS]);
  });

  it.each(['ExecuteBashObservation', 'messageevent', 'openhands.sdk.event.MessageEvent', ''])(
    'refuses the kind %j',
    (kind) => {
      expect(EventKindSchema.safeParse(kind).success).toBe(false);
      expect(EventSchema.safeParse({ kind }).success).toBe(false);
    },
  );

  it('refuses an event without kind', () => {
    expect(EventSchema.safeParse({ source: 'user' }).success).toBe(false);
  });
});

describe('id and timestamp', () => {
  it.each(eventCases.map((c) => [c.name, c.input] as const))('%s gets a fresh id and timestamp', (_name, input) => {
    const first = EventSchema.parse(input);
    const second = EventSchema.parse(input);
    expect(first.id).toMatch(UUID);
    expect(second.id).not.toBe(first.id);
    expect(isTimestamp(first.timestamp)).toBe(true);
  });

  it('keeps a given id and timestamp verbatim', () => {
    const event = EventSchema.parse({ kind: 'PauseEvent', id: 'evt-1', timestamp: '2024-05-01T10:00:00.123456' });
    expect(event).toMatchObject({ id: 'evt-1', timestamp: '2024-05-01T10:00:00.123456' });
  });

  it.each([['yesterday'], [''], ['2024-13-01T00:00:00Z'], ['2024-01-01T25:00:00'], [1714557600000], [null]])(
    'refuses the timestamp %j',
    (timestamp) => {
      expect(EventSchema.safeParse({ kind: 'PauseEvent', timestamp }).success).toBe(false);
    },
  );

  it.each([[''], [42], [null]])('refuses the id %j', (id) => {
    expect(EventSchema.safeParse({ kind: 'PauseEvent', id }).success).toBe(false);
  });

  it('gives each ConversationStateUpdateEvent its own key unless one is given', () => {
    const input = { kind: 'ConversationStateUpdateEvent' } as const;
    const first = EventSchema.parse(input);
    const second = EventSchema.parse(input);
    expect(first).toMatchObject({ key: expect.stringMatching(UUID) });
    expect(second).not.toMatchObject({ key: (first as { key: string }).key });
    expect(EventSchema.parse({ ...input, key: 'full_state' })).toMatchObject({ key: 'full_state' });
  });
});

describe('source', () => {
  it.each(['agent', 'user', 'environment'])('accepts %s on every kind', (source) => {
    for (const c of eventCases) expect(EventSchema.parse({ ...c.input, source }).source).toBe(source);
  });

  it.each(['hook', 'Agent', 'system', '', null])('refuses %j', (source) => {
    expect(EventSourceSchema.safeParse(source).success).toBe(false);
    expect(EventSchema.safeParse({ kind: 'PauseEvent', source }).success).toBe(false);
  });

  it.each(['ConversationErrorEvent', 'MessageEvent', 'TokenEvent'])('%s has no default source', (kind) => {
    const input = { ...eventCases.find((c) => c.name === kind)?.input };
    delete input['source'];
    expect(EventSchema.safeParse(input).success).toBe(false);
  });
});

describe('EventSortOrderSchema', () => {
  it('accepts exactly TIMESTAMP and TIMESTAMP_DESC', () => {
    expect(EventSortOrderSchema.options).toEqual(['TIMESTAMP', 'TIMESTAMP_DESC']);
    expect(EventSortOrderSchema.safeParse('timestamp').success).toBe(false);
  });
});
