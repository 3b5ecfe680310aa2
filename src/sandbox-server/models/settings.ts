import { z } from '@hono/zod-openapi';
import { RUNTIME_SETTINGS } from '../../contracts/sandbox.js';
import { INT32_MAX, MAX_WARM_POOL_SIZE } from './sandbox-spec.js';

/** The settings every replica on the database shares; the environment of the first start seeded them. */
export const SettingsSchema = z
  .object({
    warm_pool_size: z.number().int().openapi({ description: "Ready sandboxes kept for the default spec (seeded from SANDBOX_WARM_POOL)" }),
    default_memory_mb: z.number().int().openapi({ description: 'Memory limit of the default spec and of specs created without memory_mb (SANDBOX_DEFAULT_MEMORY_MB)' }),
    default_pids_limit: z.number().int().openapi({ description: 'Process limit of the default spec and of specs created without pids_limit (SANDBOX_DEFAULT_PIDS)' }),
    default_cpus: z.number().openapi({ description: 'CPU limit of the default spec and of specs created without cpus (SANDBOX_DEFAULT_CPUS)' }),
    default_disk_mb: z.number().int().openapi({ description: 'Disk limit of the default spec and of specs created without disk_mb (SANDBOX_DEFAULT_DISK_MB)' }),
    default_runtime: z.enum(RUNTIME_SETTINGS).openapi({ description: 'Runtime of the default spec and of specs created without runtime; auto: runsc where it passes its self-test, else runc (SANDBOX_RUNTIME)' }),
    updated_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('Settings', { description: 'Installation-wide settings, held in the database and shared by every replica (our extension)' });
export type SettingsInfo = z.infer<typeof SettingsSchema>;

/** Each field left out keeps its value; the bounds are those of the environment variables. */
export const UpdateSettingsRequestSchema = z
  .object({
    warm_pool_size: z.number().int().min(0).max(MAX_WARM_POOL_SIZE).optional(),
    default_memory_mb: z.number().int().min(16).max(INT32_MAX).optional(),
    default_pids_limit: z.number().int().min(16).max(INT32_MAX).optional(),
    default_cpus: z.number().min(0.01).max(1024).optional(),
    default_disk_mb: z.number().int().min(16).max(INT32_MAX).optional(),
    default_runtime: z.enum(RUNTIME_SETTINGS).optional(),
  })
  .strict()
  .openapi('UpdateSettingsRequest');
export type UpdateSettingsRequest = z.infer<typeof UpdateSettingsRequestSchema>;
