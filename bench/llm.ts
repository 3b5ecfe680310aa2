/**
 * The agent loop's own time per step, with the LLM and the tool taken out: from an LLM answer
 * received to its tool started (parsing the answer, recording the action events), and from the
 * tool done to the next LLM request sent (recording the observation, rebuilding the view and the
 * messages, writing the body). A real event log on disk, a stand-in LLM on 127.0.0.1 answering a
 * `think` call every time, and the think tool timed around its own work. Goal: ≤ 5 ms p50 each.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAgentRunner } from '../src/agent-server/agent/index.js';
import { createLlmClient, type LlmClient } from '../src/agent-server/agent/llm/index.js';
import { createThinkTool, type AnyTool } from '../src/agent-server/agent/tools/index.js';
import { MessageEventSchema, messageSearchText, type Event } from '../src/events/index.js';
import { openEventLog } from '../src/agent-server/store/index.js';
import { startScriptedLlm, toolCalls } from '../test/helpers/scripted-llm.js';
import { percentile } from './measure.js';

const STEPS = 300;

export async function run(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-llm-'));
  let calls = 0;
  const llm = await startScriptedLlm([], {
    responder: () => toolCalls([{ name: 'think', arguments: { thought: `step ${++calls}: ${'why '.repeat(40)}` } }]),
  });
  const marks: { answer?: number; toolStart?: number; toolEnd?: number } = {};
  const toTool: number[] = [];
  const toNextRequest: number[] = [];

  const inner = createLlmClient({ model: 'bench-model', base_url: llm.baseUrl, api_key: 'sk-bench', max_retries: 0 });
  const timedLlm: LlmClient = {
    config: inner.config,
    async complete(request) {
      if (marks.toolEnd !== undefined) toNextRequest.push(performance.now() - marks.toolEnd);
      const answer = await inner.complete(request);
      marks.answer = performance.now();
      return answer;
    },
  };
  const think = createThinkTool();
  const timedThink: AnyTool = {
    ...think,
    async execute(action: Parameters<typeof think.execute>[0], ctx?: Parameters<typeof think.execute>[1]) {
      const started = performance.now();
      if (marks.answer !== undefined) toTool.push(started - marks.answer);
      const result = await think.execute(action, ctx);
      marks.toolEnd = performance.now();
      return result;
    },
  };

  const log = await openEventLog<Event>(join(dir, 'events.ndjson'), { searchableText: messageSearchText });
  await log.append([MessageEventSchema.parse({ kind: 'MessageEvent', source: 'user', llm_message: { role: 'user', content: [{ type: 'text', text: 'think hard' }] } })]);
  const runner = await createAgentRunner({
    conversationId: 'bench',
    log,
    llm: timedLlm,
    tools: [timedThink],
    maxIterations: STEPS,
    confirmationPolicy: { kind: 'NeverConfirm' },
    stuckDetection: true,
  });
  const started = performance.now();
  await runner.run();
  const seconds = (performance.now() - started) / 1000;
  await runner.close();
  await log.close();
  await llm.close();
  await rm(dir, { recursive: true, force: true });

  const line = (name: string, values: number[]) =>
    console.log(`${name.padEnd(42)} p50 ${percentile(values, 0.5).toFixed(2).padStart(6)} ms   p95 ${percentile(values, 0.95).toFixed(2).padStart(6)} ms   (${values.length} steps)`);
  console.log(`${STEPS} steps in ${seconds.toFixed(1)} s, the history growing to ${STEPS * 2} events`);
  line('LLM answer received -> tool started', toTool);
  line('tool done -> next LLM request sent', toNextRequest);
}
