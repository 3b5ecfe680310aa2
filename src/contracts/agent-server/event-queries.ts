import { z } from 'zod';
import { EventSortOrderSchema, EventSourceSchema, isTimestamp } from '../../events/index.js';
import { LimitQuerySchema, PageIdQuerySchema } from '../paging.js';

/** A date-time query value, checked with the same reader the event store uses for timestamps. */
const TimestampQuerySchema = z
  .string()
  .check((ctx) => {
    if (!isTimestamp(ctx.value)) {
      ctx.issues.push({ code: 'invalid_format', format: 'datetime', input: ctx.value, message: 'Input should be a valid datetime' });
    }
  })
  .meta({ format: 'date-time' });

/** The filters of /events/search and /events/count (spec 4.1). */
export const EventFilterQuerySchema = z.object({
  kind: z
    .string()
    .optional()
    .meta({ description: 'Event kind name, e.g. MessageEvent, or the class path OpenHands filters on (openhands.sdk.event.…MessageEvent)' }),
  source: EventSourceSchema.optional(),
  body: z.string().optional().meta({ description: 'Case-insensitive text of a MessageEvent' }),
  timestamp__gte: TimestampQuerySchema.optional(),
  timestamp__lt: TimestampQuerySchema.optional(),
});
export type EventFilterQuery = z.output<typeof EventFilterQuerySchema>;

export const EventSearchQuerySchema = EventFilterQuerySchema.extend({
  page_id: PageIdQuerySchema,
  limit: LimitQuerySchema,
  sort_order: EventSortOrderSchema.default('TIMESTAMP'),
});
export type EventSearchQuery = z.output<typeof EventSearchQuerySchema>;
