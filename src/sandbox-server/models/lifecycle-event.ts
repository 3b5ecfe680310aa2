import { z } from '@hono/zod-openapi';
import { EVENT_SORT_ORDERS } from '../../contracts/event-sort-order.js';
import { LimitQuerySchema, pageSchema } from '../../contracts/paging.js';
import { storableDateTime } from './common.js';
import { LIFECYCLE_EVENT_TYPES, SUBJECT_KINDS } from '../../contracts/lifecycle-event.js';

export const LifecycleEventTypeSchema = z.enum(LIFECYCLE_EVENT_TYPES).openapi('LifecycleEventType');

/** Event ids are decimal positions in commit order; 15 digits keep them exact as JavaScript numbers. */
export const EventIdSchema = z
  .string()
  .regex(/^\d{1,15}$/, 'must be an event id (decimal digits)')
  .openapi({ example: '42' });

export const LifecycleEventSchema = z
  .object({
    /** Increases in commit order: resume a stream after the last id seen. */
    id: EventIdSchema,
    type: LifecycleEventTypeSchema,
    subject_kind: z.enum(SUBJECT_KINDS),
    subject_id: z.string(),
    sandbox_id: z.string().nullable(),
    previous_status: z.string().nullable(),
    status: z.string().nullable(),
    status_detail: z.string().nullable(),
    timestamp: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('LifecycleEvent');
export type LifecycleEvent = z.infer<typeof LifecycleEventSchema>;

export const LifecycleEventPageSchema = pageSchema(LifecycleEventSchema).openapi('LifecycleEventPage');

/** `?type=a&type=b`: Hono hands over one value as a string and repeated ones as an array. */
const TypesQuerySchema = z
  .preprocess((value) => (typeof value === 'string' ? [value] : value), z.array(LifecycleEventTypeSchema))
  .optional()
  .openapi({ type: 'array', items: { type: 'string', enum: [...LIFECYCLE_EVENT_TYPES] }, description: 'Only these types (repeatable).' });

/** An id as text: PostgreSQL text cannot hold NUL, so one is a bad id (422), not a database error. */
export const IdTextSchema = z.string().min(1).max(200).regex(/^[^\u0000]*$/, 'must not contain NUL characters');

const TimestampQuerySchema = storableDateTime({ offset: true }).openapi({ format: 'date-time' });

/** The filters shared by the search, the stream and the socket. */
export const EventFilterQuerySchema = z.object({
  type: TypesQuerySchema,
  sandbox_id: IdTextSchema.optional(),
});

export const SearchEventsQuerySchema = EventFilterQuerySchema.extend({
  timestamp__gte: TimestampQuerySchema.optional(),
  timestamp__lt: TimestampQuerySchema.optional(),
  page_id: EventIdSchema.optional(),
  limit: LimitQuerySchema,
  sort_order: z.enum(EVENT_SORT_ORDERS).default('TIMESTAMP'),
});

/** `after_event_id`: resume after this id; absent, a stream starts with the next event committed. */
export const StreamEventsQuerySchema = EventFilterQuerySchema.extend({ after_event_id: EventIdSchema.optional() });

export const LastEventIdHeaderSchema = z.object({ 'last-event-id': EventIdSchema.optional() });
