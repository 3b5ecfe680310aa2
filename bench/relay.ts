/**
 * The LLM relay's added latency: the agent's own LLM client calling an LLM stand-in (its own
 * process, on loopback, answering at once) directly, and through the relay as a sandbox's agent
 * does (the token looked up in the database, then in the relay's cache; the key swapped; the answer
 * streamed back and its usage counted). Calls alternate between the two ways, one at a time, so
 * both see the same machine; the goal is at most 2 ms added at the median.
 */
import { spawn } from 'node:child_process';
import { Registry } from 'prom-client';
import { createLlmClient } from '../src/agent-server/agent/llm/index.js';
import { logger } from '../src/logger.js';
import { openDatabase } from '../src/sandbox-server/db/client.js';
import { sandboxes, sandboxSpecs } from '../src/sandbox-server/db/schema.js';
import { registerConfiguredEngines } from '../src/sandbox-server/engines/register-engines.js';
import { createRelayMetrics } from '../src/sandbox-server/llm-relay/relay-metrics.js';
import { RelayRoutes } from '../src/sandbox-server/llm-relay/relay-routes.js';
import { listenLlmRelay } from '../src/sandbox-server/llm-relay/relay-server.js';
import { relayedLlm } from '../src/sandbox-server/services/app-conversations/relayed-llm.js';
import { formatRatio, loadAverage, percentile, printTable } from './measure.js';

const CALLS = 1500;
const WARMUP = 100;

/** Answers every POST at once: a whole chat completion, or with "stream": true, three SSE chunks. */
const STAND_IN = `
const answer = JSON.stringify({ id: 'c', object: 'chat.completion', model: 'bench', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 12, completion_tokens: 1 } });
const chunk = (delta, extra) => 'data: ' + JSON.stringify({ id: 'c', object: 'chat.completion.chunk', model: 'bench', choices: [{ index: 0, delta, finish_reason: extra ? 'stop' : null }], usage: extra ?? null }) + '\\n\\n';
require('node:http').createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    if (body.includes('"stream":true')) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(chunk({ role: 'assistant', content: 'o' }) + chunk({ content: 'k' }, { prompt_tokens: 12, completion_tokens: 1 }) + 'data: [DONE]\\n\\n');
    } else res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) }).end(answer);
  });
}).listen(0, '127.0.0.1', function () { console.log(this.address().port); });`;

export async function run(): Promise<void> {
  const standIn = spawn(process.execPath, ['-e', STAND_IN], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => standIn.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim()))));
  const handle = await openDatabase({});
  const relay = await listenLlmRelay(
    {
      routes: new RelayRoutes(handle.db, { log: logger }),
      serverKey: 'sk-bench-real-key',
      acceptsFrom: () => true,
      metrics: createRelayMetrics(new Registry()),
      log: logger,
    },
    '127.0.0.1',
    0,
  );
  try {
    await registerConfiguredEngines(handle.db, undefined, 'unix:///var/run/docker.sock');
    await handle.db.insert(sandboxSpecs).values({ id: 'bench', image: 'bench', command: null, workingDir: '/workspace', exposedPorts: [] });
    await handle.db.insert(sandboxes).values({ id: 'bench', specId: 'bench', engine: 'local', desiredState: 'RUNNING', status: 'RUNNING', sessionApiKey: 'bench-session-key' });
    const upstream = `http://127.0.0.1:${port}/v1`;
    const settings = { llm: { model: 'openai/bench', baseUrl: upstream }, llmRelay: { origin: `http://127.0.0.1:${relay.port}` }, sandboxStartTimeoutMs: 1000 };
    const given = await relayedLlm(handle.db, settings, { conversationId: 'bench', sandboxId: 'bench', model: 'openai/bench', ownApiKey: null });
    const messages = [{ role: 'user' as const, content: 'Say ok. '.repeat(200) }];
    const rows: string[][] = [];
    for (const stream of [false, true]) {
      const direct = createLlmClient({ model: 'openai/bench', base_url: upstream, api_key: 'sk-bench-real-key', stream });
      const relayed = createLlmClient({ model: 'openai/bench', base_url: given.base_url, api_key: given.api_key, stream });
      const times = { direct: [] as number[], relayed: [] as number[] };
      // CPU time of this process (client, and relay when relayed): the difference is what the relay costs, however long the machine made it wait.
      const cpu = { direct: [] as number[], relayed: [] as number[] };
      for (let call = 0; call < WARMUP + CALLS; call++) {
        const order = call % 2 === 0 ? (['direct', 'relayed'] as const) : (['relayed', 'direct'] as const);
        for (const way of order) {
          const cpuBefore = process.cpuUsage();
          const started = performance.now();
          await (way === 'direct' ? direct : relayed).complete({ messages });
          if (call < WARMUP) continue;
          times[way].push(performance.now() - started);
          const used = process.cpuUsage(cpuBefore);
          cpu[way].push((used.user + used.system) / 1000);
        }
      }
      const p50 = { direct: percentile(times.direct, 0.5), relayed: percentile(times.relayed, 0.5) };
      // Each relayed call against the direct call beside it: steadier than two medians on a loaded machine.
      const paired = times.relayed.map((relayedMs, i) => relayedMs - (times.direct[i] ?? 0));
      const p95 = { direct: percentile(times.direct, 0.95), relayed: percentile(times.relayed, 0.95) };
      rows.push([
        stream ? 'streamed' : 'whole answer',
        `${p50.relayed.toFixed(3)} / ${p95.relayed.toFixed(3)} ms`,
        `${p50.direct.toFixed(3)} / ${p95.direct.toFixed(3)} ms`,
        `+${(p50.relayed - p50.direct).toFixed(3)} ms`,
        `+${percentile(paired, 0.5).toFixed(3)} ms`,
        `${(percentile(cpu.relayed, 0.5) - percentile(cpu.direct, 0.5)).toFixed(3)} ms`,
        formatRatio(p50.relayed / p50.direct),
      ]);
    }
    console.log(`${CALLS} calls each way (after ${WARMUP}), alternating, one at a time; load average ${loadAverage()}`);
    printTable(['LLM call', 'through the relay p50 / p95', 'direct p50 / p95', 'added p50 (goal <= 2 ms)', 'p50 of paired differences', 'relay CPU per call (p50)', 'ratio'], rows);
  } finally {
    standIn.kill();
    await relay.close();
    await handle.close();
  }
}
