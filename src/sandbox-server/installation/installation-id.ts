import type { Database } from '../db/client.js';
import { installation } from '../db/schema.js';

/** This database's installation id, drawn by the migration that made the table (see schema.ts `installation`). */
export async function readInstallationId(db: Database): Promise<string> {
  const [row] = await db.select({ id: installation.id }).from(installation).limit(1);
  if (!row) throw new Error('the database has no installation id: its migrations did not finish');
  return row.id;
}
