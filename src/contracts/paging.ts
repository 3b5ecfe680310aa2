import { z } from 'zod';

/** `limit` of every /search: 1..100, default 100 (spec section 8). */
export const LimitQuerySchema = z.coerce.number().int().min(1).max(100).default(100);

/** `page_id`: the `next_page_id` of the previous page, opaque to clients. */
export const PageIdQuerySchema = z.string().min(1).optional();

export interface Page<T> {
  items: T[];
  next_page_id: string | null;
}

export function pageSchema<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item), next_page_id: z.string().nullable() });
}
