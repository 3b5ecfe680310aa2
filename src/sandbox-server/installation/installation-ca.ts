import type { Database } from '../db/client.js';
import { installationCa } from '../db/schema.js';
import { createCaMaterial, type CaMaterial } from '../broker/certificate-authority.js';

/**
 * The installation's CA: made by the first start and kept in the database, so that every replica
 * mints leaves sandboxes trust, and a restarted sandbox still trusts the proxy. Replicas starting
 * together each make one and the first insert wins; all then read the winner.
 */
export async function loadInstallationCa(db: Database, installationId: string): Promise<CaMaterial> {
  const read = async () => (await db.select({ certPem: installationCa.certPem, keyPem: installationCa.keyPem }).from(installationCa).limit(1))[0];
  const existing = await read();
  if (existing) return existing;
  await db.insert(installationCa).values(createCaMaterial(installationId)).onConflictDoNothing();
  const made = await read();
  if (!made) throw new Error('the installation CA could not be stored');
  return made;
}
