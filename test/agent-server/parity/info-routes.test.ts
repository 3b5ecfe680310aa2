/**
 * The open routes and the information routes OpenHands clients read before they start a
 * conversation, driven through the published client and over raw HTTP.
 */
import {
  DesktopClient,
  LLMMetadataClient,
  ServerClient,
  SettingsClient,
  SkillsClient,
  ToolClient,
  VSCodeClient,
} from '@openhands/typescript-client/clients';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startListeningAgentServer, type ListeningAgentServer } from '../../helpers/agent-server.js';
// After the helpers: they load @hono/zod-openapi, which must extend zod before any contract is built.
import { startConversation } from '../../../src/agent-server/services/conversations/start-conversation.js';

let agent: ListeningAgentServer;

beforeAll(async () => {
  agent = await startListeningAgentServer();
});
afterAll(async () => {
  await agent.close();
});

const keyed = () => ({ host: agent.url, apiKey: agent.key });

describe('open routes', () => {
  it('serves /, /server_info, /ready, /openapi.json and /docs to a client without a key', async () => {
    const server = new ServerClient({ host: agent.url });
    try {
      expect(await server.getRoot()).toMatchObject({ title: 'agent-server', docs: '/docs' });
      expect((await server.getServerInfo()).version).toEqual(expect.any(String));
      expect(await server.getReady()).toEqual({ status: 'ready' });
    } finally {
      server.close();
    }
    expect((await fetch(`${agent.url}/openapi.json`)).status).toBe(200);
    expect((await fetch(`${agent.url}/docs`)).status).toBe(200);
    expect((await fetch(`${agent.url}/api/tools/`)).status).toBe(401);
  });

  it('answers a CORS preflight without a key', async () => {
    const response = await fetch(`${agent.url}/api/conversations/search`, {
      method: 'OPTIONS',
      headers: { origin: 'http://localhost:3001', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-session-api-key' },
    });
    expect(response.status).not.toBe(401);
  });
});

describe('information routes', () => {
  it("lists the configured models' providers and models, and verifies none", async () => {
    const llm = new LLMMetadataClient(keyed());
    try {
      await startConversation(agent.server.ctx, {
        agent: { kind: 'Agent', llm: { model: 'anthropic/claude-x' } },
        workspace: { working_dir: agent.workspaceDir },
        confirmation_policy: { kind: 'NeverConfirm' },
        max_iterations: 5,
        stuck_detection: true,
        secrets: {},
        tags: {},
      });
      expect(await llm.getProviders()).toEqual(['anthropic', 'openai']);
      expect(await llm.getModels()).toContain('anthropic/claude-x');
      expect(await llm.getModels('openai')).not.toContain('anthropic/claude-x');
      expect(await llm.getVerifiedModels()).toEqual({});
    } finally {
      llm.close();
    }
  });

  it('describes the agent and conversation settings from the schemas that validate them', async () => {
    const settings = new SettingsClient(keyed());
    try {
      const agentSchema = await settings.getAgentSchema();
      expect(agentSchema.model_name).toBe('AgentSettings');
      const llmFields = agentSchema.sections.find((section) => section.key === 'llm')!.fields;
      expect(llmFields.find((field) => field.key === 'llm.model')).toMatchObject({ value_type: 'string', secret: false });
      expect(llmFields.find((field) => field.key === 'llm.api_key')).toMatchObject({ secret: true });
      const conversationSchema = await settings.getConversationSchema();
      const fields = conversationSchema.sections[0]!.fields;
      expect(fields.find((field) => field.key === 'conversation.max_iterations')).toMatchObject({ value_type: 'integer', default: 500 });
      expect(fields.map((field) => field.key)).not.toContain('conversation.secrets');
    } finally {
      settings.close();
    }
  });

  it('lists the tools, no skills, no VS Code and no desktop', async () => {
    const tools = new ToolClient(keyed());
    const skills = new SkillsClient(keyed());
    const vscode = new VSCodeClient(keyed());
    const desktop = new DesktopClient(keyed());
    try {
      expect(await tools.listTools()).toEqual([
        'terminal', 'file_editor', 'task_tracker', 'glob', 'grep', 'read_file', 'write_file', 'edit', 'list_directory', 'planning_file_editor', 'browser_tool_set',
      ]);
      expect(await skills.getSkills({ load_public: false, load_user: false, load_project: true, load_org: false })).toEqual({
        skills: [],
        sources: { project: 0 },
      });
      expect(await vscode.getStatus()).toEqual({ enabled: false, running: false });
      expect(await desktop.getUrl()).toBeNull();
    } finally {
      for (const client of [tools, skills, vscode, desktop]) client.close();
    }
  });

  it('answers 422 to a skills request that is not a JSON object', async () => {
    const response = await fetch(`${agent.url}/api/skills`, {
      method: 'POST',
      headers: { 'x-session-api-key': agent.key, 'content-type': 'application/json' },
      body: '[1]',
    });
    expect(response.status).toBe(422);
    expect(((await response.json()) as { detail: unknown[] }).detail.length).toBeGreaterThan(0);
  });
});
