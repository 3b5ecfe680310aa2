import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../../src/sandbox-server/db/client.js';
import { sandboxSpecs } from '../../../src/sandbox-server/db/schema.js';
import { ensureDefaultSandboxSpec } from '../../../src/sandbox-server/services/sandbox-specs/default-spec.js';
import { openTestDatabase, testDrivers } from '../../helpers/database.js';

describe.each(testDrivers)('ensureDefaultSandboxSpec (%s)', (driver) => {
  let handle: DatabaseHandle;
  beforeAll(async () => {
    handle = await openTestDatabase(driver);
  });
  afterAll(() => handle.close());

  const specs = () => handle.db.select().from(sandboxSpecs).orderBy(sandboxSpecs.id);

  it('inserts the agent-server spec once, however often and however concurrently it runs', async () => {
    await ensureDefaultSandboxSpec(handle.db, 'agent:1');
    const [first] = await specs();
    await Promise.all([1, 2, 3].map(() => ensureDefaultSandboxSpec(handle.db, 'agent:1')));
    expect(await specs()).toEqual([first]);
    expect(first).toMatchObject({
      id: 'agent:1',
      image: 'agent:1',
      command: null,
      initialEnv: {},
      workingDir: '/workspace',
      exposedPorts: [{ name: 'AGENT_SERVER', container_port: 8000 }],
      memoryMb: 2048,
      pidsLimit: 512,
      cpus: 1,
      diskMb: 10_240,
      isDefault: true,
      deletedAt: null,
    });
  });

  it("takes the operator's current limits at every start", async () => {
    await ensureDefaultSandboxSpec(handle.db, 'agent:1', { memoryMb: 512, pidsLimit: 64, cpus: 0.5, diskMb: 1024 });
    expect((await specs())[0]).toMatchObject({ id: 'agent:1', memoryMb: 512, pidsLimit: 64, cpus: 0.5, diskMb: 1024 });
    await ensureDefaultSandboxSpec(handle.db, 'agent:1');
    expect((await specs())[0]).toMatchObject({ memoryMb: 2048, pidsLimit: 512, cpus: 1, diskMb: 10_240 });
  });

  it('moves the default to a new image and back, keeping the old spec', async () => {
    await ensureDefaultSandboxSpec(handle.db, 'agent:2');
    expect((await specs()).map((s) => [s.id, s.isDefault])).toEqual([
      ['agent:1', false],
      ['agent:2', true],
    ]);
    await ensureDefaultSandboxSpec(handle.db, 'agent:1');
    expect((await specs()).map((s) => [s.id, s.isDefault])).toEqual([
      ['agent:1', true],
      ['agent:2', false],
    ]);
  });
});
