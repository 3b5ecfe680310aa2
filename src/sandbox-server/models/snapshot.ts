import { z } from '@hono/zod-openapi';
import { LimitQuerySchema, PageIdQuerySchema, pageSchema } from '../../contracts/paging.js';

export const SnapshotInfoSchema = z
  .object({
    id: z.string(),
    name: z.string().nullable(),
    /** The sandbox it was taken of (it may since have been deleted). */
    sandbox_id: z.string(),
    sandbox_spec_id: z.string(),
    /** Our extension: the engine holding it; sandboxes started from it run there. */
    engine: z.string(),
    /** Bytes the snapshot holds of its own: the container's changed files plus its data volume. */
    size_bytes: z.number().int(),
    created_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('SnapshotInfo');
export type SnapshotInfo = z.infer<typeof SnapshotInfoSchema>;

export const SnapshotPageSchema = pageSchema(SnapshotInfoSchema).openapi('SnapshotPage');

export const SearchSnapshotsQuerySchema = z.object({
  page_id: PageIdQuerySchema,
  limit: LimitQuerySchema,
  sandbox_id: z.string().min(1).optional(),
  sandbox_spec_id: z.string().min(1).optional(),
});

export const SnapshotIdParamsSchema = z.object({ id: z.string().min(1) });

const SnapshotNameSchema = z.string().min(1).max(200).nullable().optional();

export const TakeSnapshotRequestSchema = z.object({ name: SnapshotNameSchema }).strict().openapi('TakeSnapshotRequest');

export const ForkSandboxRequestSchema = z
  .object({ name: SnapshotNameSchema.openapi({ description: 'Name of the snapshot the fork starts from' }) })
  .strict()
  .openapi('ForkSandboxRequest');
