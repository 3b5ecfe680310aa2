/**
 * The control plane in this process, on PGlite, with one RUNNING sandbox row whose agent-server is
 * the bundled program the bench started (bench/http-load.ts): what the proxy and preview benches
 * send their requests through.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSandboxServerApp } from '../src/sandbox-server/app.js';
import { openDatabase } from '../src/sandbox-server/db/client.js';
import { sandboxes } from '../src/sandbox-server/db/schema.js';
import { registerConfiguredEngines } from '../src/sandbox-server/engines/register-engines.js';
import { EventFeed } from '../src/sandbox-server/lifecycle-events/event-feed.js';
import { ensureDefaultSandboxSpec } from '../src/sandbox-server/services/sandbox-specs/default-spec.js';
import { newSandboxId } from '../src/sandbox-server/services/sandboxes/new-ids.js';

export interface BenchControlPlane {
  port: number;
  sandboxId: string;
  close(): Promise<void>;
}

export async function startControlPlaneBeside(agentServerPort: number, sessionApiKey: string, apiKey: string): Promise<BenchControlPlane> {
  const handle = await openDatabase({});
  await registerConfiguredEngines(handle.db, undefined, 'unix:///var/run/docker.sock');
  const specId = 'bench/agent-server:http';
  await ensureDefaultSandboxSpec(handle.db, specId);
  const sandboxId = newSandboxId();
  await handle.db.insert(sandboxes).values({
    id: sandboxId,
    specId,
    engine: 'local',
    desiredState: 'RUNNING',
    status: 'RUNNING',
    sessionApiKey,
    hostPorts: { AGENT_SERVER: agentServerPort },
    hostAddress: '127.0.0.1',
  });
  const { listener } = createSandboxServerApp({ db: handle.db, reconciler: { kick: () => {} }, apiKeys: [apiKey], maxRunningSandboxes: 10, events: new EventFeed() });
  const listening = await new Promise<Server>((resolve) => {
    const server = createServer(listener).listen(0, '127.0.0.1', () => resolve(server));
  });
  return {
    port: (listening.address() as AddressInfo).port,
    sandboxId,
    async close() {
      await new Promise((resolve) => listening.close(resolve));
      await handle.close();
    },
  };
}
