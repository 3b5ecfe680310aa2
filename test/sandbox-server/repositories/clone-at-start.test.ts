import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { AppConversationStartTaskSchema } from '../../../src/sandbox-server/models/app-conversation.js';
import { LifecycleEventPageSchema } from '../../../src/sandbox-server/models/lifecycle-event.js';
import { SandboxInfoSchema } from '../../../src/sandbox-server/models/sandbox.js';
import { SandboxSpecInfoSchema } from '../../../src/sandbox-server/models/sandbox-spec.js';
import type { DatabaseHandle } from '../../../src/sandbox-server/db/client.js';
import { ValidationErrorSchema } from '../../helpers/answer.js';
import { openTestDatabase } from '../../helpers/database.js';
import { startGitServer, type GitServer } from '../../helpers/git-server.js';
import { type ScriptedLlm, startScriptedLlm, toolCalls } from '../../helpers/scripted-llm.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';
import { IMAGE, type Harness, openHarness } from '../app-conversations/harness.js';

const TOKEN = 'git-token-5f0c9a8e21';

/**
 * An app conversation on a private repository: cloned at start from a real git server on this
 * machine (smart HTTP, basic auth), on the control plane's side, copied into the workspace, its
 * setup script run and its skills found, then worked on by the agent with the token masked.
 */
describe('cloning the selected repository at start', () => {
  let handle: DatabaseHandle;
  let h: Harness;
  let git: GitServer;
  let llm: ScriptedLlm;
  let workspace: string;
  let sandboxId: string;
  let repositoryUrl: string;

  beforeAll(async () => {
    git = await startGitServer({ username: 'git', password: TOKEN });
    repositoryUrl = await git.addRepository(
      'app',
      {
        'hello.py': 'print("hello from the repository")\n',
        'AGENTS.md': 'Run hello.py with python3.\n',
        '.openhands/setup.sh': '#!/bin/bash\necho "installing dependencies"\necho ran > .setup-marker\n',
        '.openhands/microagents/deploy.md': '---\ntriggers:\n- deploy\n---\nDeploy with make ship.\n',
      },
      { feature: { 'feature.txt': 'only on the feature branch\n' } },
    );
    llm = await startScriptedLlm([
      toolCalls([
        {
          name: 'terminal',
          arguments: { command: 'python3 hello.py && cat feature.txt .setup-marker && echo "token=$GIT_TOKEN" && git config --get remote.origin.url && git ls-remote origin main | wc -l' },
        },
      ]),
      toolCalls([{ name: 'finish', arguments: { message: 'Ran it.' } }]),
    ]);
    handle = await openTestDatabase('pglite');
    h = await openHarness(handle, { llmBaseUrl: llm.baseUrl });
    workspace = await makeTempDir('clone-workspace-');
    const spec = await h.request('POST', '/api/v1/sandbox-specs', { id: 'clone-spec', image: IMAGE, working_dir: workspace }, SandboxSpecInfoSchema);
    expect(spec.status).toBe(201);
    const sandbox = await h.request('POST', '/api/v1/sandboxes', { sandbox_spec_id: 'clone-spec' }, SandboxInfoSchema);
    sandboxId = sandbox.body.id;
  });
  afterAll(async () => {
    await h.close();
    await handle.close();
    await llm.close();
    await git.close();
    await removeDir(workspace);
  });

  async function finishedTask(body: Record<string, unknown>) {
    const { status, body: task } = await h.request('POST', '/api/v1/app-conversations', { sandbox_id: sandboxId, ...body }, AppConversationStartTaskSchema);
    expect(status).toBe(200);
    return vi.waitFor(
      async () => {
        const { body: tasks } = await h.request('GET', `/api/v1/app-conversations/start-tasks?ids=${task.id}`, undefined, z.array(AppConversationStartTaskSchema));
        expect(['READY', 'ERROR']).toContain(tasks[0]?.status);
        return tasks[0]!;
      },
      { timeout: 60_000, interval: 100 },
    );
  }

  it('clones the branch, runs the setup script, finds the skills, and the agent works in it with the token masked', async () => {
    const task = await finishedTask({
      selected_repository: repositoryUrl,
      selected_branch: 'feature',
      secrets: { GIT_TOKEN: TOKEN },
      initial_message: { role: 'user', content: [{ type: 'text', text: 'Run hello.py' }], run: true },
    });
    expect(task.status).toBe('READY');
    expect(task.log).toContain(`$ git clone --branch feature ${repositoryUrl}`);
    expect(task.log).toContain('installing dependencies');
    expect(task.log).toContain('skill deploy (knowledge: deploy)');
    expect(task.log).toContain('skill agents (repo)');

    const steps = await h.request('GET', `/api/v1/events/search?limit=100`, undefined, LifecycleEventPageSchema);
    const statuses = steps.body.items.filter((event) => event.subject_id === task.id).map((event) => event.type);
    expect(statuses).toEqual(
      expect.arrayContaining(['start_task.preparing_repository', 'start_task.running_setup_script', 'start_task.setting_up_skills', 'start_task.ready']),
    );

    await vi.waitFor(() => expect(llm.requests.length).toBe(2), { timeout: 30_000, interval: 50 });
    const observed = JSON.stringify(llm.requests[1]!.body.messages.at(-1));
    expect(observed).toContain('hello from the repository');
    expect(observed).toContain('only on the feature branch');
    expect(observed).toContain('token=<secret_hidden>');
    // The remote is the plain URL, and the credential helper gives the agent's git the token from its environment.
    expect(observed).toContain(repositoryUrl);
    expect(observed).toMatch(/\\n1\\n/);
    expect(JSON.stringify(llm.requests[0]!.body.messages[0])).toContain('Run hello.py with python3.');

    const gitConfig = await readFile(join(workspace, 'app', '.git', 'config'), 'utf8');
    expect(gitConfig).toContain('name = openhands');
    expect(gitConfig).toContain(repositoryUrl);
    const events = await (await fetch(`http://127.0.0.1:${h.agentPort}/api/conversations/${task.app_conversation_id}/events/export`)).text();
    const taskText = JSON.stringify(task);
    for (const text of [gitConfig, events, taskText, ...llm.requests.map((request) => JSON.stringify(request.body))]) expect(text).not.toContain(TOKEN);

    // A second conversation on the same repository in the same sandbox works in the first one's tree.
    await writeFile(join(workspace, 'app', 'work-in-progress.txt'), 'kept');
    const again = await finishedTask({ selected_repository: repositoryUrl, secrets: { GIT_TOKEN: TOKEN } });
    expect(again.status).toBe('READY');
    expect(again.log).toContain(`${join(workspace, 'app')} already holds files: kept as it is`);
    expect(await readFile(join(workspace, 'app', 'work-in-progress.txt'), 'utf8')).toBe('kept');
  });

  it('ends the start task in ERROR with the reason for a bad token, a missing branch or an unreachable server', async () => {
    const badToken = await finishedTask({ selected_repository: repositoryUrl, secrets: { GIT_TOKEN: 'wrong-token-value' } });
    expect(badToken).toMatchObject({ status: 'ERROR' });
    expect(badToken.detail).toContain(`Authentication failed for ${repositoryUrl}`);
    expect(badToken.detail).not.toContain('wrong-token-value');

    const noToken = await finishedTask({ selected_repository: repositoryUrl });
    expect(noToken.detail).toContain('no token was given');

    const missingBranch = await finishedTask({ selected_repository: repositoryUrl, selected_branch: 'nope', secrets: { GIT_TOKEN: TOKEN } });
    expect(missingBranch.detail).toBe(`Branch nope not found in ${repositoryUrl}`);

    const unreachable = await finishedTask({ selected_repository: 'http://127.0.0.1:9/app.git', secrets: { GIT_TOKEN: TOKEN } });
    expect(unreachable.detail).toContain('Cannot reach http://127.0.0.1:9/app.git');
  });

  it('refuses a repository it cannot name with a 422', async () => {
    for (const [body, field] of [
      [{ selected_repository: 'owner/app', git_provider: 'sourcehut' }, 'git_provider'],
      [{ selected_repository: 'ftp://127.0.0.1/app.git' }, 'selected_repository'],
      [{ selected_repository: 'not a repo' }, 'selected_repository'],
      [{ selected_repository: repositoryUrl, selected_branch: '--upload-pack=x' }, 'selected_branch'],
    ] as const) {
      const answer = await h.request('POST', '/api/v1/app-conversations', body, ValidationErrorSchema);
      expect(answer.status).toBe(422);
      expect(answer.body.detail[0]?.loc).toEqual(['body', field]);
    }
  });
});
