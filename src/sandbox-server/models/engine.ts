import { z } from '@hono/zod-openapi';

const LABEL_KEY = /^[a-zA-Z0-9](?:[a-zA-Z0-9._/-]{0,62})$/;

/** Engine labels, and the constraints a spec puts on them: a few short keys and values. */
export const EngineLabelsSchema = z
  .record(z.string(), z.string().max(63))
  .superRefine((labels, ctx) => {
    const keys = Object.keys(labels);
    if (keys.length > 32) ctx.addIssue({ code: 'custom', message: 'at most 32 labels' });
    for (const key of keys) {
      if (!LABEL_KEY.test(key)) ctx.addIssue({ code: 'custom', path: [key], message: 'must be 1-63 letters, digits, ".", "_", "/" or "-", starting with a letter or digit' });
    }
  })
  .openapi('EngineLabels', { example: { zone: 'a', gpu: 'none' } });
