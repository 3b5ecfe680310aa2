import { sql } from 'drizzle-orm';
import { UnavailableError } from '../../../errors/index.js';
import { logger } from '../../../logger.js';
import type { ServiceContext } from '../context.js';

/** The service is healthy when its database answers a trivial query. */
export async function checkHealth(ctx: ServiceContext): Promise<void> {
  try {
    await ctx.db.execute(sql`select 1`);
  } catch (err) {
    logger.warn({ err }, 'health check: database did not answer');
    throw new UnavailableError('Database unavailable', 1);
  }
}
