/**
 * A prompt-injected agent against the file editor of the real agent-server, in its container: while
 * the editor views and edits /workspace/t, a program of the agent swaps t between its file and links
 * to the conversation's meta.json (the LLM key, the secrets) and to root's /app/package.json. The
 * editor once checked the path and then used it, and lost this race (11 in 40 under gVisor): it
 * must now see the link whenever it is there, and refuse it. 200 views and 200 edits per runtime.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { pageSchema } from '../../src/contracts/paging.js';
import { EventSchema, type ObservationEvent } from '../../src/events/index.js';
import { AppConversationSchema } from '../../src/sandbox-server/models/app-conversation.js';
import { connectDocker, removeInstanceResources } from '../helpers/docker.js';
import { type ScriptedLlm, type ScriptStep, startScriptedLlm, toolCalls } from '../helpers/scripted-llm.js';
import { buildE2eImage, type E2eControlPlane, startE2eControlPlane } from './harness.js';
import { startRunningSandbox } from './sandbox-agent.js';

const docker = await connectDocker();
const RACES = 200;
/** Tool calls per LLM answer: the editor runs them one after another. */
const CALLS_PER_STEP = 50;
const ROOT_PACKAGE_JSON = '{"type":"module"}\n';
const EventPageSchema = pageSchema(EventSchema);

describe.runIf(docker).each(['runsc', 'runc'] as const)('the file editor against a swapping agent under %s', (runtime) => {
  let cp: E2eControlPlane;
  let llm: ScriptedLlm;
  const script: ScriptStep[] = [];
  const canary = `race-canary-${randomBytes(12).toString('hex')}`;

  beforeAll(async () => {
    await buildE2eImage();
    // On this host's loopback, reached through the control plane's LLM relay.
    llm = await startScriptedLlm([], { responder: () => script.shift() ?? { status: 500, body: { error: { message: 'script exhausted' } } } });
    cp = await startE2eControlPlane({
      SANDBOX_RUNTIME: runtime,
      LLM_MODEL: 'openai/scripted',
      LLM_BASE_URL: llm.baseUrl,
      LLM_API_KEY: canary,
    });
  }, 180_000);
  afterAll(async () => {
    await cp?.close();
    await llm?.close();
    if (cp) await removeInstanceResources(docker as Docker, cp.instanceId);
  });

  it(`reads no secret and writes no root file in ${RACES} views and ${RACES} edits`, async () => {
    const { sandbox, path: agent, bash: bashWithTimeout, upload } = await startRunningSandbox(cp);
    const bash = (command: string) => bashWithTimeout(command, 60);

    const conversationId = randomUUID();
    const meta = `/data/conversations/${conversationId}/meta.json`;
    // Every call's arguments differ, or stuck detection would stop the agent as going round in circles.
    const calls = (step: number, args: (call: number) => Record<string, unknown>) =>
      toolCalls(Array.from({ length: CALLS_PER_STEP }, (_, i) => ({ name: 'file_editor', arguments: args(step * CALLS_PER_STEP + i) })));
    const steps = RACES / CALLS_PER_STEP;
    script.push(
      ...Array.from({ length: steps }, (_, step) => calls(step, (call) => ({ command: 'view', path: '/workspace/t', view_range: [1, 2 + call] }))),
      ...Array.from({ length: steps }, (_, step) =>
        calls(step, (call) => ({ command: 'str_replace', path: '/workspace/t', old_str: '"module"', new_str: `"pwned-${call}"` })),
      ),
      toolCalls([{ name: 'finish', arguments: { message: 'Done' } }]),
    );
    expect((await bash(`cat /app/package.json`)).stdout).toBe(ROOT_PACKAGE_JSON);
    // The attacker, as the agent's own user, as fast as it can: t is its file, then a link to
    // meta.json, then its file, then a link to /app/package.json, each swap one atomic rename.
    await upload('/tmp/swapper.mjs', swapperScript(meta));
    expect((await bash('(cd /workspace && setsid node /tmp/swapper.mjs > /dev/null 2>&1 < /dev/null &)')).exit_code).toBe(0);

    const started = await cp.request('POST', '/api/v1/app-conversations?wait=true', {
      sandbox_id: sandbox.id,
      conversation_id: conversationId,
      secrets: { RACE_SECRET: canary },
      initial_message: { role: 'user', content: [{ type: 'text', text: 'Look at /workspace/t and edit it' }], run: true },
    }, AppConversationSchema);
    expect(started.status).toBe(200);
    const id = started.body.id;
    await vi.waitFor(
      async () => expect((await cp.request('GET', `/api/v1/app-conversations/${id}`, undefined, AppConversationSchema)).body.execution_status).toBe('finished'),
      { timeout: 300_000, interval: 500 },
    );
    const swaps = Number((await bash('cat /tmp/swaps')).stdout);
    await bash('pkill -u openhands -f swapper.mjs || true');

    const events = await allEvents(cp, agent(`/api/conversations/${conversationId}/events/search`));
    const observations = events.filter((e): e is ObservationEvent => e.kind === 'ObservationEvent' && e.observation.kind === 'FileEditorObservation');
    expect(observations).toHaveLength(2 * RACES);
    expect(JSON.stringify(events)).not.toContain(canary);
    expect((await bash(`cat /app/package.json`)).stdout).toBe(ROOT_PACKAGE_JSON);

    const outcome = (e: ObservationEvent) => {
      const text = JSON.stringify(e.observation.content);
      if (!e.observation.is_error) return 'done';
      if (text.includes('outside the workspace')) return 'refused';
      // The agent's own file, already edited by an earlier call of the script.
      if (text.includes('old_str was not found')) return 'not-found';
      // Refused as the agent's user (EACCES), or met mid-swap (ELOOP, not a regular file).
      return /\b(E[A-Z]+):/.exec(text)?.[1] ?? (text.includes('not a regular file') ? 'not-regular' : text.slice(0, 120));
    };
    const tally = (list: ObservationEvent[]) => list.reduce<Record<string, number>>((counts, e) => ({ ...counts, [outcome(e)]: (counts[outcome(e)] ?? 0) + 1 }), {});
    const views = tally(observations.slice(0, RACES));
    const edits = tally(observations.slice(RACES));
    console.log(`${runtime}: ${swaps} swap rounds; views ${JSON.stringify(views)}; edits ${JSON.stringify(edits)}`);
    // The races were real: the editor met the agent's links as well as its file.
    expect(swaps).toBeGreaterThan(0);
    expect(views.refused ?? 0).toBeGreaterThan(0);
  }, 600_000);
});

/** A Node program swapping `t` in its working directory as fast as it can, counting rounds in /tmp/swaps. */
function swapperScript(meta: string): string {
  return `import { renameSync, symlinkSync, writeFileSync } from 'node:fs';
const own = '{"type":"module"}\\n';
for (let n = 1; ; n += 1) {
  writeFileSync('f', own); renameSync('f', 't');
  symlinkSync(${JSON.stringify(meta)}, 'l'); renameSync('l', 't');
  writeFileSync('f', own); renameSync('f', 't');
  symlinkSync('/app/package.json', 'l'); renameSync('l', 't');
  if (n % 100 === 0) writeFileSync('/tmp/swaps', String(n));
}
`;
}

/** Every event of a conversation, page by page, as the agent-server stores them. */
async function allEvents(cp: E2eControlPlane, searchPath: string) {
  const events = [];
  let pageId: string | null | undefined;
  do {
    const query = `?limit=100${pageId ? `&page_id=${encodeURIComponent(pageId)}` : ''}`;
    const page = await cp.request('GET', `${searchPath}${query}`, undefined, EventPageSchema);
    expect(page.status).toBe(200);
    events.push(...page.body.items);
    pageId = page.body.next_page_id;
  } while (pageId);
  return events;
}
