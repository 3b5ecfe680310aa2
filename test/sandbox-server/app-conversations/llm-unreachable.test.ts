import { type AddressInfo, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { pageSchema } from '../../../src/contracts/paging.js';
import { ConversationErrorEventSchema } from '../../../src/events/index.js';
import type { DatabaseHandle } from '../../../src/sandbox-server/db/client.js';
import { AppConversationSchema } from '../../../src/sandbox-server/models/app-conversation.js';
import { openTestDatabase, testDrivers } from '../../helpers/database.js';
import { type Harness, openHarness } from './harness.js';


/**
 * An LLM the relay cannot reach shows in the conversation at once, as its ConversationErrorEvent
 * and the `error` status, rather than after the agent's minutes of retries (five, from 8 s apart).
 */
describe.each(testDrivers)('a conversation whose LLM cannot be reached (%s)', (driver) => {
  let handle: DatabaseHandle;
  let h: Harness;
  // An LLM that drops every connection it is given, counting them: each attempt of the agent is one.
  let attempts = 0;
  const dropping = createServer((socket) => {
    attempts++;
    socket.destroy();
  });

  beforeAll(async () => {
    handle = await openTestDatabase(driver);
    await new Promise<void>((resolve) => dropping.listen(0, '127.0.0.1', resolve));
    h = await openHarness(handle, { llmBaseUrl: `http://127.0.0.1:${(dropping.address() as AddressInfo).port}/v1` });
  });
  afterAll(async () => {
    await h?.close();
    dropping.close();
    await handle?.close();
  });

  it('ends in error at once with a ConversationErrorEvent naming the endpoint, without retrying', async () => {
    const ready = await h.request(
      'POST',
      '/api/v1/app-conversations?wait=true',
      { initial_message: { role: 'user', content: [{ type: 'text', text: 'hello' }], run: true } },
      AppConversationSchema,
    );
    expect(ready.status).toBe(200);
    // The agent's own retries would take minutes to end in error (8 s, 16 s, ... apart).
    await vi.waitFor(
      async () => expect((await h.request('GET', `/api/v1/app-conversations/${ready.body.id}`, undefined, AppConversationSchema)).body.execution_status).toBe('error'),
      { timeout: 30_000, interval: 100 },
    );
    expect(attempts).toBe(1);
    const errors = await h.request(
      'GET',
      `/api/v1/app-conversations/${ready.body.id}/events/search?kind=ConversationErrorEvent`,
      undefined,
      pageSchema(ConversationErrorEventSchema),
    );
    expect(errors.body.items).toHaveLength(1);
    expect(errors.body.items[0]).toMatchObject({ code: 'LLMConnectionError' });
    expect(errors.body.items[0]?.detail).toMatch(/^the LLM at http:\/\/127\.0\.0\.1:\d+ could not be reached: ECONNRESET$/);
  });
});
