import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Database } from '../../../src/sandbox-server/db/client.js';
import { type SandboxRow, type SandboxSpecRow, sandboxes, sandboxSpecs } from '../../../src/sandbox-server/db/schema.js';

export async function insertSpec(db: Database, values: Partial<typeof sandboxSpecs.$inferInsert> = {}): Promise<SandboxSpecRow> {
  const [spec] = await db
    .insert(sandboxSpecs)
    .values({
      id: `spec-${randomUUID()}`,
      image: 'sandbox-base:local',
      command: null,
      workingDir: '/workspace',
      exposedPorts: [{ name: 'AGENT_SERVER', container_port: 8000 }],
      ...values,
    })
    .returning();
  return spec as SandboxSpecRow;
}

export async function insertSandbox(db: Database, specId: string, values: Partial<typeof sandboxes.$inferInsert> = {}): Promise<SandboxRow> {
  const [row] = await db
    .insert(sandboxes)
    .values({
      id: randomUUID(),
      specId,
      engine: 'local',
      desiredState: 'RUNNING',
      status: 'STARTING',
      sessionApiKey: randomBytes(16).toString('hex'),
      ...values,
    })
    .returning();
  return row as SandboxRow;
}

export async function readSandbox(db: Database, id: string): Promise<SandboxRow> {
  const [row] = await db.select().from(sandboxes).where(eq(sandboxes.id, id));
  if (!row) throw new Error(`no sandbox row ${id}`);
  return row;
}

export async function setDesired(db: Database, id: string, desiredState: SandboxRow['desiredState']): Promise<void> {
  await db.update(sandboxes).set({ desiredState }).where(eq(sandboxes.id, id));
}

/** A stand-in agent-server on loopback answering `/server_info` with each session key's agent idle time. */
export interface IdleReportingAgentServer {
  port: number;
  /** Seconds the agent did nothing, by session key; a key not here is refused with 401. */
  idleSeconds: Map<string, number>;
  close(): Promise<void>;
}

export async function startIdleReportingAgentServer(): Promise<IdleReportingAgentServer> {
  const idleSeconds = new Map<string, number>();
  const server = createServer((request, response) => {
    const seconds = idleSeconds.get(String(request.headers['x-session-api-key']));
    if (request.url !== '/server_info' || seconds === undefined) return response.writeHead(401).end();
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ title: 'agent-server', version: '1', uptime: 3600, idle_time: seconds, docs: '/docs' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    idleSeconds,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
