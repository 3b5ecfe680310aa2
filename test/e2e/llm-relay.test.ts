import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { pageSchema } from '../../src/contracts/paging.js';
import { ObservationEventSchema } from '../../src/events/index.js';
import { AppConversationSchema } from '../../src/sandbox-server/models/app-conversation.js';
import { SandboxInfoSchema } from '../../src/sandbox-server/models/sandbox.js';
import { SandboxSpecInfoSchema } from '../../src/sandbox-server/models/sandbox-spec.js';
import { LABEL_SANDBOX_ID } from '../../src/sandbox-server/runtime/runtime.js';
import { connectDocker, execAsRoot, removeInstanceResources } from '../helpers/docker.js';
import { type ScriptedLlm, type ScriptStep, startScriptedLlm, toolCalls } from '../helpers/scripted-llm.js';
import { buildE2eImage, E2E_IMAGE, type E2eControlPlane, startE2eControlPlane } from './harness.js';

const docker = await connectDocker();
const CANARY = `sk-canary-${crypto.randomUUID()}`;
const message = (text: string) => ({ role: 'user', content: [{ type: 'text', text }], run: true });
/** What the agent runs to look for a key: every environment it can read, and the agent-server's files it can. */
const SNOOP = 'cat /proc/*/environ 2>/dev/null | tr "\\0" "\\n" | sort -u; env; grep -rs "sk-" /data /app /tmp /home 2>/dev/null | head -50; echo snooped';

/**
 * The LLM relay on the real engine: a `network: none` sandbox, which reaches nothing outside itself,
 * runs a whole conversation with the LLM stand-in on this host's loopback (LLM_BASE_URL
 * http://127.0.0.1:...), through the relay; and the key the relay adds is nowhere in the sandbox.
 */
describe.runIf(docker)('the LLM relay on Docker', () => {
  let cp: E2eControlPlane;
  let llm: ScriptedLlm;
  const engine = docker as Docker;
  const script: ScriptStep[] = [];

  beforeAll(async () => {
    await buildE2eImage();
    llm = await startScriptedLlm([], { responder: () => script.shift() ?? { status: 500, body: { error: { message: 'script exhausted' } } } });
    cp = await startE2eControlPlane({ LLM_MODEL: 'openai/scripted', LLM_BASE_URL: llm.baseUrl, LLM_API_KEY: CANARY });
  }, 180_000);
  afterAll(async () => {
    await cp?.close();
    await llm?.close();
    if (cp) await removeInstanceResources(engine, cp.instanceId);
  });

  it.each(['runc', 'runsc'] as const)(
    'runs a whole conversation in a network "none" %s sandbox with the LLM on the host, and the key is nowhere in the sandbox',
    async (runtime) => {
      const spec = await cp.request('POST', '/api/v1/sandbox-specs', { id: `relay-${runtime}-${cp.instanceId}`, image: E2E_IMAGE, runtime, network: 'none' }, SandboxSpecInfoSchema);
      expect(spec.status, JSON.stringify(spec.body)).toBe(201);
      const started = await cp.request('POST', `/api/v1/sandboxes?sandbox_spec_id=${encodeURIComponent(spec.body.id)}`, undefined, SandboxInfoSchema);
      const sandbox = await cp.sandboxUntil(started.body.id, 'RUNNING');
      const before = llm.requests.length;
      script.push(
        toolCalls([{ name: 'terminal', arguments: { command: SNOOP } }], { usage: { prompt_tokens: 120, completion_tokens: 30 } }),
        toolCalls([{ name: 'finish', arguments: { message: 'Done' } }], { usage: { prompt_tokens: 200, completion_tokens: 10 } }),
      );

      const ready = await cp.request('POST', '/api/v1/app-conversations?wait=true', { sandbox_id: sandbox.id, initial_message: message('Look around') }, AppConversationSchema);
      expect(ready.status, JSON.stringify(ready.body)).toBe(200);
      const id = ready.body.id;
      await vi.waitFor(
        async () => expect((await cp.request('GET', `/api/v1/app-conversations/${id}`, undefined, AppConversationSchema)).body.execution_status).toBe('finished'),
        { timeout: 90_000, interval: 250 },
      );

      // The provider saw the real key on every call; the agent's command saw none of it.
      const calls = llm.requests.slice(before);
      expect(calls).toHaveLength(2);
      for (const call of calls) expect(call.headers.authorization).toBe(`Bearer ${CANARY}`);
      const observations = (await cp.request('GET', `/api/v1/app-conversations/${id}/events/search?kind=ObservationEvent`, undefined, pageSchema(ObservationEventSchema))).body.items;
      const output = JSON.stringify(observations[0]?.observation);
      expect(output).toContain('snooped');
      expect(output).not.toContain(CANARY);

      // As root: no process's environment, no file of the agent-server or the agent, and not the container's config.
      const [container] = await engine.listContainers({ filters: { label: [`${LABEL_SANDBOX_ID}=${sandbox.id}`] } });
      const inside = engine.getContainer(container!.Id);
      const environments = await rootOutput(inside, 'for f in /proc/[0-9]*/environ; do cat "$f"; echo; done 2>/dev/null | tr "\\0" "\\n"');
      expect(environments).toMatch(/PATH=/);
      expect(environments).not.toContain(CANARY);
      // Every directory but the kernel's views (/proc shows grep's own command line) and the system's programs.
      const files = await rootOutput(inside, `grep -rls -- "${CANARY}" $(ls -d /* | grep -vxE "/(proc|sys|dev|usr)"); echo searched`);
      expect(files).toBe('searched\n');
      expect(JSON.stringify(await inside.inspect())).not.toContain(CANARY);
    },
    180_000,
  );
});

const rootOutput = async (container: Docker.Container, script: string) => (await execAsRoot(container, script)).output;
