/**
 * A conversation deleted while it is written: the delete waits for the writes under way, refuses
 * those after it (404), and what it removed stays removed after a restart, secrets included. Before
 * the write guard, 14 of 60 such races answered 500 (ENOTEMPTY, ENOENT .meta.json.tmp) and brought
 * the conversation back at the next start.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sampleHistory } from './fixtures.js';
import { textMessage, useTestAgentServer } from '../../helpers/agent-server.js';

const agent = useTestAgentServer();
const TRIALS = 60;

/** Lets `turns` rounds of I/O pass, so the delete lands at a different point of the writes each trial. */
async function after(turns: number): Promise<void> {
  for (let i = 0; i < turns; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

describe('deleting a conversation while it is written', () => {
  it(`answers no 500 in ${TRIALS} races, and nothing deleted comes back after a restart`, async () => {
    const statuses = new Map<number, number>();
    const deleted: string[] = [];
    for (let trial = 0; trial < TRIALS; trial += 1) {
      const { id } = await agent.server.createConversation({ secrets: { TOKEN: `secret-${trial}` } });
      const path = `/api/conversations/${id}`;
      const writes = [
        agent.server.call('PATCH', path, { json: { title: `title ${trial}` } }),
        agent.server.call('POST', `${path}/secrets`, { json: { secrets: { MORE: 'x' } } }),
        agent.server.call('POST', `${path}/events`, { json: { ...textMessage(`message ${trial}`), run: false } }),
        agent.server.call('POST', `${path}/events/import`, { json: sampleHistory() }),
        agent.server.call('PATCH', path, { json: { title: `again ${trial}` } }),
      ];
      const removal = after(trial % 8).then(() => agent.server.call('DELETE', path));
      const answers = await Promise.all([removal, ...writes]);
      for (const answer of answers) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      expect((await removal).status).toBe(200);
      expect((await agent.server.call('GET', path)).status).toBe(404);
      deleted.push(id);
    }
    expect([...statuses.keys()].filter((status) => status >= 500)).toEqual([]);
    // The races were real: some writes came after the delete and were refused.
    expect(statuses.get(404) ?? 0).toBeGreaterThan(0);

    await agent.reopen();
    expect((await agent.server.callJson('GET', '/api/conversations/count')).body).toBe(0);
    for (const id of deleted) expect((await agent.server.call('GET', `/api/conversations/${id}`)).status).toBe(404);
    expect(await readdir(join(agent.dataDir, 'conversations'))).toEqual([]);
  });
});
