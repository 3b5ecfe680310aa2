import { eq } from 'drizzle-orm';
import type { Database, Transaction } from '../../db/client.js';
import { engines } from '../../db/schema.js';

/** What a sandbox on each unreachable engine says in its status_detail, by engine. Few rows: read per request. */
export async function engineAwayDetails(db: Database | Transaction): Promise<Map<string, string>> {
  const rows = await db.select({ name: engines.name, detail: engines.healthDetail }).from(engines).where(eq(engines.health, 'UNREACHABLE'));
  return new Map(
    rows.map((row) => [
      row.name,
      `its engine ${row.name} is unreachable${row.detail ? ` (${row.detail})` : ''}: this is its last known status, and it is brought back to its desired state when the engine answers again`,
    ]),
  );
}
