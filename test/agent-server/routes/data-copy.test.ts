import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startRequest, TestAgentServer, textMessage } from '../../helpers/agent-server.js';
import { ConversationInfoSchema } from '../../../src/contracts/agent-server/conversation-info.js';
import { pageSchema } from '../../../src/contracts/paging.js';
import { EventSchema } from '../../../src/events/index.js';
import { type ScriptedLlm, startScriptedLlm, text } from '../../helpers/scripted-llm.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';

/**
 * A data directory copied from another sandbox (a fork, a start from a snapshot) while its agent
 * ran: the copy's server pauses that conversation, the original's carries on after a restart.
 */
describe('an agent-server over a copy of another sandbox\'s data', () => {
  const servers: TestAgentServer[] = [];
  let root: string;
  let llm: ScriptedLlm;

  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
    await llm?.close();
    await removeDir(root);
  });

  async function open(dataDir: string, dataOwner: string): Promise<TestAgentServer> {
    const server = await TestAgentServer.open(dataDir, { dataOwner });
    servers.push(server);
    return server;
  }

  async function conversation(server: TestAgentServer, id: string) {
    return (await server.callJson('GET', `/api/conversations/${id}`, {}, ConversationInfoSchema)).body;
  }

  async function kinds(server: TestAgentServer, id: string): Promise<string[]> {
    const page = await server.callJson('GET', `/api/conversations/${id}/events/search?limit=100`, {}, pageSchema(EventSchema));
    return page.body.items.map((event) => event.kind);
  }

  it('starts the copied running conversation paused, asking the LLM nothing, while the original resumes it', async () => {
    root = await makeTempDir('data-copy-');
    const original = join(root, 'original');
    const fork = join(root, 'fork');
    // The first call never answers: the agent is running when the data is copied.
    llm = await startScriptedLlm([{ hang: true }, text('Done in the original.')]);
    const first = await open(original, 'sandbox-original');
    const created = await first.createConversation(
      startRequest({
        agent: { kind: 'Agent', llm: { model: 'scripted', base_url: llm.baseUrl, api_key: 'sk-test' } },
        workspace: { working_dir: root },
        initial_message: { ...textMessage('Work on it'), run: true },
      }),
    );
    await vi.waitFor(() => expect(llm.requests).toHaveLength(1), { timeout: 15_000 });
    expect((await conversation(first, created.id)).execution_status).toBe('running');
    // A snapshot copies the volume while the container is paused; closing stands in for that instant.
    await first.close();
    servers.splice(servers.indexOf(first), 1);
    await cp(original, fork, { recursive: true });

    const copy = await open(fork, 'sandbox-fork');
    expect((await conversation(copy, created.id)).execution_status).toBe('paused');
    expect((await kinds(copy, created.id)).at(-2)).toBe('PauseEvent');
    await copy.close();
    servers.splice(servers.indexOf(copy), 1);
    // The fork's own restart keeps it paused: the data is its own from now on.
    const copyAgain = await open(fork, 'sandbox-fork');
    expect((await conversation(copyAgain, created.id)).execution_status).toBe('paused');
    expect(llm.requests).toHaveLength(1);

    const restarted = await open(original, 'sandbox-original');
    await vi.waitFor(async () => expect((await conversation(restarted, created.id)).execution_status).toBe('finished'), { timeout: 15_000 });
    expect(llm.requests).toHaveLength(2);
    expect(await kinds(restarted, created.id)).not.toContain('PauseEvent');
  });
});
