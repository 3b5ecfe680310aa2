/**
 * Where a bench's control plane keeps its state: a fresh database on the PostgreSQL server
 * DATABASE_URL names (as deployments run, compose.yaml), dropped with its connections at the end;
 * or, without DATABASE_URL, embedded PGlite in the bench's data directory. The benches print which.
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';

export interface BenchDatabase {
  /** What the bench ran on, for its printout. */
  name: 'PostgreSQL' | 'PGlite';
  /** The DATABASE_URL to give the control plane; undefined for PGlite. */
  url: string | undefined;
  drop(): Promise<void>;
}

export async function benchDatabase(prefix: string, adminUrl = process.env.DATABASE_URL): Promise<BenchDatabase> {
  if (!adminUrl) return { name: 'PGlite', url: undefined, drop: async () => undefined };
  return { name: 'PostgreSQL', ...(await createDatabase(prefix, adminUrl)) };
}

/** A fresh database on the `adminUrl` server, dropped (with its connections) by `drop()`. */
export async function createDatabase(prefix: string, adminUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = async (statement: string) => {
    const sql = postgres(adminUrl, { max: 1, onnotice: () => {} });
    try {
      await sql.unsafe(statement);
    } finally {
      await sql.end({ timeout: 5 });
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
