import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { BashOutputSchema } from '../../src/contracts/agent-server/bash.js';
import { AppConversationSchema, AppConversationStartTaskSchema } from '../../src/sandbox-server/models/app-conversation.js';
import { LifecycleEventPageSchema } from '../../src/sandbox-server/models/lifecycle-event.js';
import { SandboxInfoSchema } from '../../src/sandbox-server/models/sandbox.js';
import { SandboxSpecInfoSchema } from '../../src/sandbox-server/models/sandbox-spec.js';
import { EventPageSchema } from '../../src/sandbox-server/routes/app-conversations/events.js';
import { LABEL_SANDBOX_ID } from '../../src/sandbox-server/runtime/runtime.js';
import { controlPlaneCaller, spawnControlPlane } from '../helpers/control-plane-process.js';
import { connectDocker, removeInstanceResources } from '../helpers/docker.js';
import { startGitServer, type GitServer } from '../helpers/git-server.js';
import { type ScriptedLlm, startScriptedLlm, toolCalls } from '../helpers/scripted-llm.js';
import { freePort, stopProcess } from '../helpers/processes.js';
import { makeTempDir, removeDir } from '../helpers/temp-dir.js';
import { buildE2eImage, E2E_IMAGE } from './harness.js';

const docker = await connectDocker();
/** Bookworm with python3 and no node, like python:3.12-slim (../shared/env/more-images.sh). */
const PYTHON_IMAGE = 'sandbox-python:local';
const KEY = `clone-e2e-key-${randomBytes(8).toString('hex')}`;
const TOKEN = `git-token-${randomBytes(10).toString('hex')}`;
const DEPLOY_KEY = `deploy-key-${randomBytes(10).toString('hex')}`;
const TaskListSchema = z.array(AppConversationStartTaskSchema);

/**
 * The repository, end to end through the built control plane and Docker: an app conversation on
 * an image without node, with a private repository on a git server this test starts on 127.0.0.1
 * (smart HTTP, basic auth). The sandbox cannot reach that server (its 127.0.0.1 is its own), so the
 * clone is made on the control plane's side and copied in; the agent then runs python3 on a file of
 * the repository, driven by a scripted LLM on this host (reached through the control plane's LLM
 * relay), and finishes. The token is nowhere:
 * not in an event, the control plane's log (at debug), the agent-server's log, `.git` or an LLM
 * request; a secret a command prints reaches the observation and the next LLM request masked.
 */
describe.runIf(docker).each(['runsc', 'runc'] as const)('a private repository cloned at start under %s', (runtime) => {
  const engine = docker as Docker;
  const instanceId = `clone-e2e-${runtime}-${randomBytes(4).toString('hex')}`;
  const call = controlPlaneCaller(KEY, 60_000);
  let git: GitServer;
  let llm: ScriptedLlm;
  let repositoryUrl: string;
  let dataDir: string;
  let port: number;
  let controlPlane: ChildProcess | undefined;
  let logs = '';

  const cp = { get port() { return port; } };
  const bash = async (sandboxId: string, command: string) =>
    (await call(cp, 'POST', `/api/v1/sandboxes/${sandboxId}/agent/api/bash/execute_bash_command`, { command, timeout: 60 }, BashOutputSchema)).body;

  beforeAll(async () => {
    await buildE2eImage();
    git = await startGitServer({ username: 'git', password: TOKEN });
    repositoryUrl = await git.addRepository('app', {
      'greet.py': 'def greet(name):\n    return f"hello {name} from the repository"\n',
      'hello.py': 'import sys\nfrom greet import greet\nprint(greet("agent"), sys.version_info.major)\n',
      'AGENTS.md': 'Run hello.py with python3.\n',
    });
    llm = await startScriptedLlm([
      toolCalls([
        {
          name: 'terminal',
          arguments: {
            command:
              'command -v node || echo "no node in the image"; python3 hello.py; echo "deploy=$DEPLOY_KEY token=$GIT_TOKEN"; ' +
              'git log --format=%s -1; git ls-remote origin 2>&1 | grep -c "Failed to connect"',
          },
        },
      ]),
      toolCalls([{ name: 'finish', arguments: { message: 'Ran hello.py' } }]),
    ]);
    dataDir = await makeTempDir('clone-e2e-');
    port = await freePort();
    controlPlane = await spawnControlPlane(
      port,
      {
        // Empty counts as unset: the suite's own DATABASE_URL must not reach this PGlite control plane.
        DATABASE_URL: '',
        DATA_DIR: dataDir,
        SANDBOX_SERVER_API_KEYS: KEY,
        SANDBOX_SERVER_INSTANCE: instanceId,
        AGENT_SERVER_IMAGE: E2E_IMAGE,
        SANDBOX_WARM_POOL: '0',
        SANDBOX_RUNTIME: runtime,
        LLM_RELAY_PORT: String(await freePort()),
        LLM_MODEL: 'openai/scripted',
        LLM_BASE_URL: llm.baseUrl,
        // Every line the control plane can write, so that a token in any of them is found.
        LOG_LEVEL: 'trace',
      },
      (text) => (logs += text),
    );
  }, 300_000);
  afterAll(async () => {
    await stopProcess(controlPlane, 'SIGTERM');
    await removeInstanceResources(engine, instanceId).catch(() => undefined);
    await git?.close();
    await llm?.close();
    if (dataDir) await removeDir(dataDir);
  }, 60_000);

  it('clones it on the control plane, runs python3 on its file in an image without node, and keeps the token out of everything', { timeout: 300_000 }, async () => {
    const spec = await call(cp, 'POST', '/api/v1/sandbox-specs', { id: `python-${runtime}`, image: PYTHON_IMAGE, runtime }, SandboxSpecInfoSchema);
    expect(spec.status).toBe(201);
    const started = await call(cp, 'POST', '/api/v1/sandboxes', { sandbox_spec_id: `python-${runtime}` }, SandboxInfoSchema);
    expect(started.status).toBe(200);
    const sandboxId = started.body.id;
    await vi.waitFor(
      async () => expect((await call(cp, 'GET', `/api/v1/sandboxes?id=${sandboxId}`, undefined, z.array(SandboxInfoSchema.nullable()))).body[0]?.status).toBe('RUNNING'),
      { timeout: 120_000, interval: 250 },
    );

    const created = await call(
      cp,
      'POST',
      '/api/v1/app-conversations',
      {
        sandbox_id: sandboxId,
        selected_repository: repositoryUrl,
        secrets: { GIT_TOKEN: TOKEN, DEPLOY_KEY },
        initial_message: { role: 'user', content: [{ type: 'text', text: 'Run hello.py' }], run: true },
      },
      AppConversationStartTaskSchema,
    );
    expect(created.status).toBe(200);
    const task = await vi.waitFor(
      async () => {
        const [found] = (await call(cp, 'GET', `/api/v1/app-conversations/start-tasks?ids=${created.body.id}`, undefined, TaskListSchema)).body;
        expect(['READY', 'ERROR']).toContain(found?.status);
        return found!;
      },
      { timeout: 120_000, interval: 250 },
    );
    expect(task).toMatchObject({ status: 'READY', detail: null });
    expect(task.log).toContain(`$ git clone ${repositoryUrl}`);
    expect(task.log).toContain('copied into /workspace/app');
    expect(task.log).toContain('skill agents (repo)');
    const conversationId = task.app_conversation_id!;
    await vi.waitFor(
      async () => {
        const [conversation] = (await call(cp, 'GET', `/api/v1/app-conversations?ids=${conversationId}`, undefined, z.array(AppConversationSchema.nullable()))).body;
        expect(conversation?.execution_status).toBe('finished');
      },
      { timeout: 120_000, interval: 250 },
    );

    const events = (await call(cp, 'GET', `/api/v1/app-conversations/${conversationId}/events/search?limit=100`, undefined, EventPageSchema)).body.items;
    const observations = events.filter((event) => event['kind'] === 'ObservationEvent').map((event) => JSON.stringify(event['observation']));
    expect(observations).toHaveLength(2);
    expect(observations[0]).toContain('no node in the image');
    expect(observations[0]).toContain('hello agent from the repository 3');
    expect(observations[0]).toContain('deploy=<secret_hidden> token=<secret_hidden>');
    expect(observations[0]).toContain('first');
    // The sandbox cannot reach the git server: the clone it works in was made by the control plane.
    expect(observations[0]).toMatch(/first\\n1\\n/);
    expect(JSON.stringify(events.find((event) => event['kind'] === 'SystemPromptEvent'))).toContain('Run hello.py with python3.');

    const requests = llm.requests.map(({ headers, body }) => ({ headers, body }));
    expect(requests).toHaveLength(2);
    const next = JSON.stringify(requests[1]!.body.messages.at(-1));
    expect(next).toContain('hello agent from the repository 3');
    expect(next).toContain('deploy=<secret_hidden> token=<secret_hidden>');

    const gitConfig = await bash(sandboxId, 'cat /workspace/app/.git/config; git -C /workspace/app remote -v; stat -c %U /workspace/app/hello.py');
    expect(gitConfig).toMatchObject({ exit_code: 0 });
    expect(gitConfig.stdout).toContain(`url = ${repositoryUrl}`);
    expect(gitConfig.stdout).toContain('name = openhands');
    expect(gitConfig.stdout).toMatch(/openhands\n$/);
    // No file of the workspace, .git included, holds the token (the command names it encoded only).
    const encoded = Buffer.from(TOKEN).toString('base64');
    expect(await bash(sandboxId, `grep -rlF "$(echo ${encoded} | base64 -d)" /workspace; echo "found $?"`)).toMatchObject({ stdout: 'found 1\n' });

    const [container] = await engine.listContainers({ filters: { label: [`${LABEL_SANDBOX_ID}=${sandboxId}`] } });
    const agentServerLog = (await engine.getContainer(container!.Id).logs({ stdout: true, stderr: true, follow: false })).toString('utf8');
    const lifecycle = (await call(cp, 'GET', '/api/v1/events/search?limit=100', undefined, LifecycleEventPageSchema)).body.items;
    expect(lifecycle.filter((event) => event.subject_id === task.id).map((event) => event.type)).toEqual(
      expect.arrayContaining(['start_task.preparing_repository', 'start_task.setting_up_skills', 'start_task.ready']),
    );
    // The control plane did log this run (the clone's requests among them): the search below is not of an empty log.
    expect(logs).toContain(sandboxId);
    const everything = { events, requests, gitConfig: gitConfig.stdout, agentServerLog, lifecycle, task, logs };
    for (const [where, value] of Object.entries(everything)) {
      const text = typeof value === 'string' ? value : JSON.stringify(value);
      expect({ where, token: text.includes(TOKEN), deployKey: text.includes(DEPLOY_KEY) }).toEqual({ where, token: false, deployKey: false });
    }
    // Only the control plane's clone asked the git server, each time with the token.
    expect(new Set(git.authorizations)).toEqual(new Set([`Basic ${Buffer.from(`git:${TOKEN}`).toString('base64')}`]));

    expect((await call(cp, 'DELETE', `/api/v1/sandboxes/${sandboxId}`)).status).toBe(200);
  });
});
