import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { startRequest, textMessage, useTestAgentServer } from '../../helpers/agent-server.js';
import { ConversationInfoSchema } from '../../../src/contracts/agent-server/conversation-info.js';
import { pageSchema } from '../../../src/contracts/paging.js';
import { EventSchema } from '../../../src/events/index.js';
import { parseFrontMatter } from '../../../src/agent-server/instructions/front-matter.js';
import { type ScriptedLlm, startScriptedLlm, text } from '../../helpers/scripted-llm.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';

const SkillsAnswerSchema = z.object({
  skills: z.array(z.object({ name: z.string(), type: z.string(), content: z.string(), triggers: z.array(z.string()), source: z.string().nullable() })),
  sources: z.record(z.string(), z.number()),
});

/** Repository instructions and skills, and the agent context, reaching what the LLM is sent. */
describe('instructions and skills', () => {
  let workspace: string;
  let llm: ScriptedLlm | undefined;

  beforeEach(async () => {
    workspace = await makeTempDir('skills-workspace-');
    await mkdir(join(workspace, '.openhands/microagents'), { recursive: true });
    await writeFile(join(workspace, 'AGENTS.md'), '# Rules\nRun the tests with pytest -q before finishing.\n');
    await writeFile(join(workspace, '.openhands/microagents/repo.md'), '---\nname: repo\ntype: repo\n---\nIndent with tabs in this repository.\n');
    await writeFile(
      join(workspace, '.openhands/microagents/deploy.md'),
      '---\nname: deploy\ntype: knowledge\ntriggers:\n  - deploy\n  - "Release"\n---\nDeploy with `make ship`, never by hand.\n',
    );
    await writeFile(join(workspace, '.openhands/microagents/README.md'), 'Not a skill.\n');
  });
  afterEach(async () => {
    await llm?.close();
    llm = undefined;
    await removeDir(workspace);
  });
  const agent = useTestAgentServer({ tempPrefix: 'skills-http-' });

  async function finished(id: string) {
    await vi.waitFor(
      async () => expect((await agent.server.callJson('GET', `/api/conversations/${id}`, {}, ConversationInfoSchema)).body.execution_status).toBe('finished'),
      { timeout: 15_000, interval: 25 },
    );
  }

  it('puts AGENTS.md, repo skills and the suffix in the system message, and triggered skills in user messages, once each', async () => {
    llm = await startScriptedLlm([text('Noted.'), text('Noted again.')]);
    const created = await agent.server.createConversation(
      startRequest({
        agent: {
          kind: 'Agent',
          llm: { model: 'scripted', base_url: llm.baseUrl, api_key: 'sk-test' },
          agent_context: {
            system_message_suffix: 'Suffix: answer in English.',
            user_message_suffix: 'Reminder: be brief.',
            skills: [{ name: 'fruit', content: 'Bananas are yellow.', trigger: { type: 'keyword', keywords: ['banana'] } }],
          },
        },
        workspace: { working_dir: workspace },
        initial_message: { ...textMessage('Please DEPLOY the app'), run: true },
      }),
    );
    await finished(created.id);
    const first = llm.requests[0]!.body.messages;
    const system = JSON.stringify(first[0]);
    expect(system).toContain('Run the tests with pytest -q');
    expect(system).toContain('Indent with tabs');
    expect(system).toContain('Suffix: answer in English.');
    expect(system).not.toContain('make ship');
    const user = JSON.stringify(first[1]);
    expect(user).toContain('Please DEPLOY the app');
    expect(user).toContain('Deploy with `make ship`');
    expect(user).toContain('Reminder: be brief.');
    expect(user).not.toContain('Bananas');

    await agent.server.callJson('POST', `/api/conversations/${created.id}/events`, { json: { ...textMessage('Release it with a banana'), run: true } });
    await finished(created.id);
    const second = JSON.stringify(llm.requests[1]!.body.messages.at(-1));
    expect(second).toContain('Bananas are yellow.');
    expect(second).not.toContain('make ship');

    const messages = (
      await agent.server.callJson('GET', `/api/conversations/${created.id}/events/search?kind=MessageEvent&source=user`, {}, pageSchema(EventSchema))
    ).body.items;
    expect(messages.map((event) => (event.kind === 'MessageEvent' ? event.activated_skills : null))).toEqual([['deploy'], ['fruit']]);
    const info = await agent.server.callJson('GET', `/api/conversations/${created.id}`, {}, ConversationInfoSchema);
    expect(info.body.activated_knowledge_skills).toEqual(['deploy', 'fruit']);
  });

  it('lists the project skills at /api/skills', async () => {
    const answer = await agent.server.callJson('POST', '/api/skills', { json: { project_dir: workspace, load_public: false } }, SkillsAnswerSchema);
    expect(answer.status).toBe(200);
    expect(answer.body.sources).toEqual({ user: 0, project: 3, org: 0 });
    expect(answer.body.skills.map(({ name, type, triggers, source }) => ({ name, type, triggers, source }))).toEqual([
      { name: 'agents', type: 'repo', triggers: [], source: 'AGENTS.md' },
      { name: 'deploy', type: 'knowledge', triggers: ['deploy', 'release'], source: '.openhands/microagents/deploy.md' },
      { name: 'repo', type: 'repo', triggers: [], source: '.openhands/microagents/repo.md' },
    ]);
  });

  it('reads the front matter subset skill files use', () => {
    expect(parseFrontMatter("---\nname: 'x'\ntriggers: [a, \"b c\"]\nother:\n- one\n---\nBody\n")).toEqual({
      fields: { name: 'x', triggers: ['a', 'b c'], other: ['one'] },
      body: 'Body\n',
    });
    expect(parseFrontMatter('No front matter')).toEqual({ fields: {}, body: 'No front matter' });
  });
});
