import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { brokeredSecretsOf } from '../../../src/sandbox-server/broker/sandbox-secrets.js';
import type { DatabaseHandle } from '../../../src/sandbox-server/db/client.js';
import { brokeredSecrets, sandboxSpecs } from '../../../src/sandbox-server/db/schema.js';
import { AppConversationStartTaskSchema } from '../../../src/sandbox-server/models/app-conversation.js';
import { SandboxInfoSchema } from '../../../src/sandbox-server/models/sandbox.js';
import { ValidationErrorSchema } from '../../helpers/answer.js';
import { openTestDatabase, testDrivers } from '../../helpers/database.js';
import { type Harness, openHarness } from './harness.js';

/** A conversation's StaticSecret with `hosts`: its agent holds a placeholder, the egress proxy's store the value. */
describe.each(testDrivers)('brokered conversation secrets (%s)', (driver) => {
  let handle: DatabaseHandle;
  let h: Harness;

  beforeAll(async () => {
    handle = await openTestDatabase(driver);
    h = await openHarness(handle);
  });
  afterAll(async () => {
    await h.close();
    await handle.close();
  });

  /** The start task's end, READY or ERROR. */
  const finished = (taskId: string) =>
    vi.waitFor(
      async () => {
        const { body } = await h.request('GET', `/api/v1/app-conversations/start-tasks?ids=${taskId}`, undefined, z.array(AppConversationStartTaskSchema));
        expect(body[0]?.status).toMatch(/READY|ERROR/);
        return body[0]!;
      },
      { timeout: 30_000, interval: 50 },
    );
  /** Every spec's sandboxes on `network`: the harness starts sandboxes of its default spec. */
  const specsOn = (network: 'internet' | 'allowlist') => handle.db.update(sandboxSpecs).set({ network });

  it('gives the agent a placeholder and keeps the value for the proxy, for the hosts named only', async () => {
    await specsOn('allowlist');
    const { body: task } = await h.request(
      'POST',
      '/api/v1/app-conversations',
      {
        secrets: {
          GITHUB_TOKEN: { kind: 'StaticSecret', value: 'ghp_value_5b7c', hosts: ['GitHub.com', 'api.github.com'], description: 'GitHub' },
          PLAIN: 'plain-value',
        },
      },
      AppConversationStartTaskSchema,
    );
    const ready = await finished(task.id);
    expect(ready).toMatchObject({ status: 'READY' });
    const conversation = h.agent.ctx.conversations.require(ready.app_conversation_id ?? '');
    const shell = await conversation.secrets.environment('echo $GITHUB_TOKEN $PLAIN');
    expect(shell.PLAIN).toBe('plain-value');
    expect(shell.GITHUB_TOKEN).toMatch(/^sbx_brokered_[A-Za-z0-9_-]{43}$/);
    expect(conversation.secrets.infos()).toContainEqual({ name: 'GITHUB_TOKEN', description: 'GitHub' });
    expect(JSON.stringify(conversation.metadata)).not.toContain('ghp_value_5b7c');

    const sandboxId = ready.sandbox_id ?? '';
    expect(await brokeredSecretsOf(handle.db, sandboxId)).toEqual([
      { name: 'GITHUB_TOKEN', placeholder: shell.GITHUB_TOKEN, value: 'ghp_value_5b7c', hosts: ['github.com', 'api.github.com'] },
    ]);
    await h.request('DELETE', `/api/v1/sandboxes/${sandboxId}`);
    expect(await handle.db.select().from(brokeredSecrets).where(eq(brokeredSecrets.sandboxId, sandboxId))).toEqual([]);
    await specsOn('internet');
  });

  it('refuses brokered secrets for a sandbox outside an allowlist, whose traffic never passes the proxy: 422 when named, else the start task fails saying so', async () => {
    await specsOn('internet');
    const secrets = { T: { kind: 'StaticSecret', value: 'never-placed-7f1e', hosts: ['github.com'] }, PLAIN: 'plain' };
    const { body: sandbox } = await h.request('POST', '/api/v1/sandboxes', {}, SandboxInfoSchema);
    const named = await h.request('POST', '/api/v1/app-conversations', { sandbox_id: sandbox.id, secrets }, ValidationErrorSchema);
    expect(named.status).toBe(422);
    expect(named.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'secrets', 'T', 'hosts'], msg: expect.stringContaining('needs an "allowlist" sandbox') })]);

    const { body: task } = await h.request('POST', '/api/v1/app-conversations', { secrets }, AppConversationStartTaskSchema);
    const failed = await finished(task.id);
    expect(failed.status).toBe('ERROR');
    expect(failed.detail).toContain('needs an "allowlist" sandbox');
    expect(await brokeredSecretsOf(handle.db, failed.sandbox_id ?? '')).toEqual([]);
  });

  it('refuses hosts that are not host names, and a brokered secret without a value or with a line break, with 422s', async () => {
    const refused = async (secrets: Record<string, unknown>) => {
      const answer = await h.request('POST', '/api/v1/app-conversations', { secrets }, ValidationErrorSchema);
      expect(answer.status).toBe(422);
      return answer.body.detail.map((item) => item.loc);
    };
    expect(await refused({ T: { kind: 'StaticSecret', value: 'v', hosts: ['https://github.com/x'] } })).toEqual([['body', 'secrets', 'T', 'hosts', 0]]);
    expect(await refused({ T: { kind: 'StaticSecret', value: 'v', hosts: [] } })).toEqual([['body', 'secrets', 'T', 'hosts']]);
    expect(await refused({ T: { kind: 'StaticSecret', hosts: ['github.com'] } })).toEqual([['body', 'secrets', 'T', 'value']]);
    expect(await refused({ T: { kind: 'StaticSecret', value: 'a\nb', hosts: ['github.com'] } })).toEqual([['body', 'secrets', 'T', 'value']]);
  });
});
