import type { Database } from '../../db/client.js';
import { latestEventId } from '../../lifecycle-events/follow-events.js';

/**
 * Where a stream starts: after the id the client names (Last-Event-ID wins over the query, since
 * an EventSource reconnects with the same URL and the header), else after the newest event.
 */
export async function streamStart(db: Database, lastEventId: string | undefined, afterEventId: string | undefined): Promise<number> {
  const named = lastEventId ?? afterEventId;
  return named === undefined ? latestEventId(db) : Number(named);
}
