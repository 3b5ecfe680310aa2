import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { EVENT_SORT_ORDERS, type EventSortOrder } from '../contracts/event-sort-order.js';
import { JsonObjectSchema } from './json.js';
import { isTimestamp, nowTimestamp } from './timestamp.js';

/** Who produced an event. Exactly these three: the spec's enum, not OpenHands' wider one. */
export const EventSourceSchema = z.enum(['agent', 'user', 'environment']);
export type EventSource = z.output<typeof EventSourceSchema>;

export const EventSortOrderSchema = z.enum(EVENT_SORT_ORDERS);
export type { EventSortOrder };

export const SecurityRiskSchema = z.enum(['UNKNOWN', 'LOW', 'MEDIUM', 'HIGH']);
export type SecurityRisk = z.output<typeof SecurityRiskSchema>;

export const CriticResultSchema = z.strictObject({
  score: z.number().min(0).max(1),
  message: z.string().nullable(),
  metadata: JsonObjectSchema.nullable().default(null),
});
export type CriticResult = z.output<typeof CriticResultSchema>;

/**
 * A string made up when the input leaves it out. Not `.default(fn)`: the OpenAPI generator calls
 * that function and would document one random id or instant as "the default".
 */
export function generatedWhenAbsent<T extends z.ZodType<string>>(schema: T, generate: () => string) {
  return schema.optional().transform((value) => value ?? generate());
}

/** Longest event id taken: OpenHands' are UUIDs; an id is stored, indexed and logged with each event. */
export const EVENT_ID_MAX_LENGTH = 256;

export const EventIdSchema = generatedWhenAbsent(z.string().min(1).max(EVENT_ID_MAX_LENGTH), randomUUID);

export const EventTimestampSchema = generatedWhenAbsent(
  z.string().refine(isTimestamp, 'Expected an ISO 8601 date-time'),
  nowTimestamp,
);

/**
 * The fields every event kind shares. `source` is given per kind because its default is per kind,
 * and three kinds (ConversationErrorEvent, MessageEvent, TokenEvent) have none at all.
 */
export function eventShape<K extends string, S extends z.ZodType<EventSource>>(kind: K, source: S) {
  return { kind: z.literal(kind), id: EventIdSchema, timestamp: EventTimestampSchema, source };
}
