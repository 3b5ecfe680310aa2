/**
 * The runtimes' self-test at start, through the server: a runtime whose test fails is not used.
 * The fake engine's gVisor fails as gVisor 2022-12-19 did on bookworm (EINVAL from `ls`); the test
 * itself runs on the real engine in test/sandbox-server/runtime/docker-runtime-probe.test.ts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { z } from 'zod';
import { loadConfig } from '../../src/sandbox-server/config.js';
import { EnginePageSchema } from '../../src/sandbox-server/models/engine.js';
import { SandboxSpecInfoSchema, SandboxSpecPageSchema } from '../../src/sandbox-server/models/sandbox-spec.js';
import { startSandboxServer } from '../../src/sandbox-server/server.js';
import { readAnswer, ValidationErrorSchema } from '../helpers/answer.js';
import { createFakeRuntime } from '../helpers/fake-runtime.js';

const KEY = 'self-test-key-0123456789';
const EINVAL = "ls: cannot access '/': Invalid argument (exit code 2)";

describe('the runtime self-test at start', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'runtime-self-test-'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  const start = (env: Record<string, string>) => {
    const runtime = createFakeRuntime();
    runtime.failProbe('runsc', EINVAL);
    const config = loadConfig({ PORT: '0', DATA_DIR: dataDir, SANDBOX_SERVER_ADMIN_KEYS: KEY, SANDBOX_SERVER_INSTANCE: 'self-test', SANDBOX_WARM_POOL: '0', ...env });
    // Who each engine is goes unasked: e9's socket does not exist.
    return startSandboxServer(config, { runtime, ensureImage: async () => 'present', checkAlive: async () => true, engineIdentity: async () => null });
  };
  const call = async <S extends z.ZodType>(url: string, schema: S, method = 'GET', body?: unknown) =>
    readAnswer(
      await fetch(url, { method, headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }),
      schema,
    );

  it('falls back from a gVisor that fails it to runc, shows why on every engine, and refuses specs that name it', async () => {
    const server = await start({ SANDBOX_RUNTIME: 'auto', DOCKER_ENGINES: 'local=unix:///var/run/docker.sock@127.0.0.1,e9=unix:///var/run/docker-e9.sock@127.0.0.9' });
    try {
      const specs = (await call(`${server.url}/api/v1/sandbox-specs/search`, SandboxSpecPageSchema)).body.items;
      expect(specs.map((spec) => spec.runtime)).toEqual(['runc']);

      // Each engine was tested when this replica added it; e9's may still be under way.
      await vi.waitFor(async () => {
        const engines = (await call(`${server.url}/api/v1/engines`, EnginePageSchema)).body.items;
        expect(engines.map((engine) => [engine.name, engine.runtimes?.map((probe) => [probe.runtime, probe.status, probe.detail])])).toEqual([
          ['e9', [['runc', 'ok', null], ['runsc', 'failed', EINVAL]]],
          ['local', [['runc', 'ok', null], ['runsc', 'failed', EINVAL]]],
        ]);
      });

      const refused = await call(`${server.url}/api/v1/sandbox-specs`, ValidationErrorSchema, 'POST', { id: 'gvisor', image: 'sandbox-base:local', runtime: 'runsc' });
      expect(refused.status).toBe(422);
      expect(refused.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'runtime'], msg: `runtime "runsc" failed its self-test on the Docker engine: ${EINVAL}` })]);
      const runc = await call(`${server.url}/api/v1/sandbox-specs`, SandboxSpecInfoSchema, 'POST', { id: 'plain', image: 'sandbox-base:local', runtime: 'runc' });
      expect(runc.status).toBe(201);
    } finally {
      await server.close();
    }
    // A first start on a new data directory migrates its embedded database: slow on a busy machine.
  }, 120_000);

  it('refuses to start when the runtime asked for fails it, saying why', async () => {
    // The runtime is a shared setting, which the first test's start seeded in this data directory: applied on purpose.
    await expect(start({ SANDBOX_RUNTIME: 'runsc', SHARED_SETTINGS_FROM_ENV: 'true' })).rejects.toThrow(
      `SANDBOX_RUNTIME=runsc but runsc failed its self-test on the Docker engine: ${EINVAL}; install gVisor`,
    );
    // And it let go of its data directory: the next start works.
    const server = await start({ SANDBOX_RUNTIME: 'runc', SHARED_SETTINGS_FROM_ENV: 'true' });
    await server.close();
  }, 120_000);
});
