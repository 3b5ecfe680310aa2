import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { NotFoundError } from '../../../errors/index.js';
import { sandboxes, sandboxSpecs } from '../../db/schema.js';
import type { ExposedPort } from '../../db/schema.js';
import type { ServiceContext } from '../context.js';
import { findLiveSandbox } from '../sandboxes/find-sandbox.js';
import { ExpiringMap } from '../../../expiring-map.js';

/** What a preview request needs of its sandbox besides the agent-server: the spec's ports and the token key. */
export interface PreviewFacts {
  exposedPorts: readonly ExposedPort[];
  sessionApiKey: string;
  previewKey: string | null;
}

export async function readPreviewFacts(ctx: ServiceContext, sandboxId: string): Promise<PreviewFacts> {
  const row = await findLiveSandbox(ctx.db, sandboxId);
  const [spec] = await ctx.db.select({ exposedPorts: sandboxSpecs.exposedPorts }).from(sandboxSpecs).where(eq(sandboxSpecs.id, row.specId));
  return { exposedPorts: spec?.exposedPorts ?? [], sessionApiKey: row.sessionApiKey, previewKey: row.previewKey };
}

/** A preview's port as the URL names it: a number, or the name of one of the spec's exposed ports. */
export interface PreviewPort {
  port: number;
  /** The spec marks it public: no key or token is asked for. */
  public: boolean;
}

/** `segment` as a port: 1–65535, or an exposed port's name (404 for a name the spec does not have). */
export function previewPortOf(facts: PreviewFacts, segment: string): PreviewPort {
  const exposed = /^\d{1,5}$/.test(segment)
    ? facts.exposedPorts.find((entry) => entry.container_port === Number(segment))
    : facts.exposedPorts.find((entry) => entry.name === segment);
  if (exposed) return { port: exposed.container_port, public: exposed.public === true };
  const port = Number(segment);
  if (!/^\d{1,5}$/.test(segment) || port < 1 || port > 65_535) {
    throw new NotFoundError(`No port ${segment} in this sandbox: name a port from 1 to 65535 or one of its spec's exposed_ports`);
  }
  return { port, public: false };
}

/** Ends every preview token given for the sandbox so far: its preview key is drawn anew. */
export async function revokePreviewTokens(ctx: ServiceContext, sandboxId: string): Promise<void> {
  await findLiveSandbox(ctx.db, sandboxId);
  await ctx.db.update(sandboxes).set({ previewKey: randomBytes(16).toString('base64url') }).where(eq(sandboxes.id, sandboxId));
}

/** How long a sandbox's preview facts are reused: a revocation on another replica takes this long to reach this one. */
const FACTS_TTL_MS = 2_000;

export interface PreviewFactsReader {
  read(sandboxId: string): Promise<PreviewFacts>;
  /** The facts `read` gave lately, while they are still reused, without reading: undefined otherwise. */
  known(sandboxId: string): PreviewFacts | undefined;
  forget(sandboxId: string): void;
}

/** readPreviewFacts, kept for FACTS_TTL_MS so that a page's many requests cost one database read. */
export function createPreviewFactsReader(ctx: ServiceContext): PreviewFactsReader {
  const read = new ExpiringMap<string, PreviewFacts>(FACTS_TTL_MS);
  return {
    known: (sandboxId) => read.get(sandboxId),
    async read(sandboxId) {
      const hit = read.get(sandboxId);
      if (hit) return hit;
      const facts = await readPreviewFacts(ctx, sandboxId);
      read.set(sandboxId, facts);
      return facts;
    },
    forget: (sandboxId) => read.delete(sandboxId),
  };
}
