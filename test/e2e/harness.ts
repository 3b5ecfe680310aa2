import { createHash, randomBytes } from 'node:crypto';
import { expect, vi } from 'vitest';
import { z } from 'zod';
import { loadConfig } from '../../src/sandbox-server/config.js';
import { buildAgentServerImage } from '../../src/sandbox-server/image/index.js';
import { type RunningSandboxServer, startSandboxServer } from '../../src/sandbox-server/server.js';
import { SandboxInfoSchema, type SandboxInfo } from '../../src/sandbox-server/models/sandbox.js';
import { readAnswer, type Answer } from '../helpers/answer.js';
import { ensureBuilt } from '../helpers/build.js';
import { TEST_BASE_IMAGE } from '../helpers/docker.js';
import { makeTempDir, removeDir } from '../helpers/temp-dir.js';

/** Tagged per checkout, so that two checkouts testing on one engine never run each other's build. */
export const E2E_IMAGE = `sandbox-server/agent-server:e2e-${createHash('sha256').update(import.meta.dirname).digest('hex').slice(0, 8)}`;

/** Builds the agent-server image this checkout produces, FROM the offline base. */
export async function buildE2eImage(): Promise<void> {
  await ensureBuilt();
  await buildAgentServerImage({ baseImage: TEST_BASE_IMAGE, tag: E2E_IMAGE });
}

export interface E2eControlPlane {
  url: string;
  instanceId: string;
  apiKey: string;
  dataDir: string;
  /**
   * fetch() with the API key, JSON in; the body checked against `schema` (see readAnswer), or
   * without one, parsed if it is JSON and text otherwise.
   */
  request<S extends z.ZodType = z.ZodUnknown>(method: string, path: string, body?: unknown, schema?: S): Promise<Answer<z.output<S>>>;
  /** Polls the sandbox until it has `status`. */
  sandboxUntil(id: string, status: string): Promise<SandboxInfo>;
  /** Stops the server; its data directory is removed unless `keepData` (for a restart). */
  close(options?: { keepData?: boolean }): Promise<void>;
}

/**
 * The real control plane (PGlite, the Docker runtime, the reconciler) on a free port. `restart`
 * starts it again on the state of one that was closed with `keepData`: its database and instance.
 */
export async function startE2eControlPlane(
  env: Record<string, string> = {},
  restart?: { dataDir: string; instanceId: string; apiKey: string },
): Promise<E2eControlPlane> {
  const dataDir = restart?.dataDir ?? (await makeTempDir('e2e-control-plane-'));
  const apiKey = restart?.apiKey ?? `e2e-${randomBytes(12).toString('hex')}`;
  const instanceId = restart?.instanceId ?? `e2e-${randomBytes(6).toString('hex')}`;
  const server: RunningSandboxServer = await startSandboxServer(
    loadConfig({
      PORT: '0',
      DATA_DIR: dataDir,
      // The operator's key, which may also change the engines (drain.test.ts).
      SANDBOX_SERVER_ADMIN_KEYS: apiKey,
      AGENT_SERVER_IMAGE: E2E_IMAGE,
      SANDBOX_BASE_IMAGE: TEST_BASE_IMAGE,
      SANDBOX_SERVER_INSTANCE: instanceId,
      RECONCILE_INTERVAL_MS: '500',
      // Pools cost a running sandbox each; only the tests of pools ask for one.
      SANDBOX_WARM_POOL: '0',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
      ...env,
    }),
  );
  const request: E2eControlPlane['request'] = async (method, path, body, schema) => {
    const headers: Record<string, string> = { authorization: `Bearer ${apiKey}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${server.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    if (schema || response.headers.get('content-type')?.includes('json')) return readAnswer(response, schema);
    return readAnswer(new Response(JSON.stringify(await response.text()), { status: response.status }));
  };
  return {
    url: server.url,
    instanceId,
    apiKey,
    dataDir,
    request,
    sandboxUntil: (id, status) =>
      vi.waitFor(
        async () => {
          const [sandbox] = (await request('GET', `/api/v1/sandboxes?id=${id}`, undefined, z.array(SandboxInfoSchema.nullable()))).body;
          expect(sandbox?.status).toBe(status);
          return sandbox!;
        },
        { timeout: 60_000, interval: 100 },
      ),
    async close(options = {}) {
      await server.close();
      if (!options.keepData) await removeDir(dataDir);
    },
  };
}
