import { describe, expect, it } from 'vitest';
import { text, toolCalls, type ReceivedRequest, type ScriptStep } from '../../helpers/scripted-llm.js';
import { useLlmConversations } from './harness.js';

/** What conversations cost and use, and the limits that stop them: budget, stuck detection, overflow. */
describe('LLM usage, cost and limits', () => {
  const conversations = useLlmConversations('llm-usage');

  it('adds up tokens and cost per conversation, in stats, metrics and /metrics', async () => {
    const { info } = await conversations.run(
      [
        toolCalls([{ name: 'terminal', arguments: { command: 'echo hi' } }], { usage: { prompt_tokens: 1000, completion_tokens: 50, cache_write_tokens: 900 } }),
        toolCalls([{ name: 'finish', arguments: { message: 'done' } }], { usage: { prompt_tokens: 1200, completion_tokens: 20, cache_read_tokens: 900 } }),
      ],
      { llm: { model: 'anthropic/claude-sonnet-4-5' } },
    );

    // Sonnet: $3 / $15 per million tokens, cache reads $0.30, cache writes $3.75.
    const first = 100 * 3e-6 + 900 * 3.75e-6 + 50 * 15e-6;
    const second = 300 * 3e-6 + 900 * 0.3e-6 + 20 * 15e-6;
    const metrics = info.stats.usage_to_metrics.default!;
    expect(metrics.model_name).toBe('anthropic/claude-sonnet-4-5');
    expect(metrics.accumulated_cost).toBeCloseTo(first + second, 12);
    expect(metrics.costs.map((cost) => cost.cost)).toEqual([expect.closeTo(first, 12), expect.closeTo(second, 12)]);
    expect(metrics.response_latencies).toHaveLength(2);
    expect(metrics.response_latencies.every((latency) => latency.latency > 0)).toBe(true);
    expect(metrics.token_usages.map((usage) => usage.per_turn_token)).toEqual([1050, 1220]);
    expect(metrics.accumulated_token_usage).toMatchObject({ prompt_tokens: 2200, completion_tokens: 70, cache_read_tokens: 900, cache_write_tokens: 900 });
    expect(info.metrics).toMatchObject({ accumulated_cost: metrics.accumulated_cost, accumulated_token_usage: { prompt_tokens: 2200 } });

    const scrape = await (await conversations.agent.server.call('GET', '/metrics')).text();
    const sample = (name: string, labels: string) => Number(new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, 'm').exec(scrape)?.[1]);
    const model = 'model="anthropic/claude-sonnet-4-5"';
    expect(sample('llm_calls_total', model)).toBe(2);
    expect(sample('llm_cost_usd_total', model)).toBeCloseTo(first + second, 9);
    expect(sample('llm_tokens_total', `${model},kind="prompt"`)).toBe(2200);
    expect(sample('llm_tokens_total', `${model},kind="cache_read"`)).toBe(900);
    expect(sample('llm_tokens_total', `${model},kind="cache_write"`)).toBe(900);
    expect(sample('llm_call_duration_seconds_count', model)).toBe(2);
  });

  it('keeps counting after a restart', async () => {
    const { id, info } = await conversations.run([text('done')], { llm: { input_cost_per_token: 0.01 } });
    expect(info.stats.usage_to_metrics.default?.accumulated_cost).toBeCloseTo(0.1, 12);
    await conversations.agent.reopen();
    const reopened = await conversations.agent.server.callJson('GET', `/api/conversations/${id}`);
    expect(reopened.body).toMatchObject({ stats: { usage_to_metrics: { default: { accumulated_cost: expect.closeTo(0.1, 12) } } } });
  });

  const echoForever = (request: ReceivedRequest): ScriptStep =>
    toolCalls([{ name: 'terminal', arguments: { command: `echo ${request.body.messages?.length ?? 0}` } }]);

  it('stops the run with an error event when max_budget_per_task is reached', async () => {
    const { requests, info, events } = await conversations.run([], {
      llm: { input_cost_per_token: 0.0001 },
      request: { max_budget_per_task: 0.005, stuck_detection: false },
      responder: echoForever,
    });

    // Each call: 10 prompt tokens at $0.0001.
    expect(requests).toHaveLength(5);
    expect(info).toMatchObject({ execution_status: 'error', max_budget_per_task: 0.005, metrics: { max_budget_per_task: 0.005 } });
    const error = events.findLast((event) => event.kind === 'ConversationErrorEvent');
    expect(error).toMatchObject({ code: 'MaxBudgetReached' });
    expect(error?.kind === 'ConversationErrorEvent' && error.detail).toContain('$0.0050');
  });

  const sameForever = (): ScriptStep => toolCalls([{ name: 'terminal', arguments: { command: 'echo same' } }]);

  it('stops a looping agent as stuck', async () => {
    const { requests, info, events } = await conversations.run([], { responder: sameForever });

    expect(info.execution_status).toBe('stuck');
    expect(requests).toHaveLength(4);
    expect(events.findLast((event) => event.kind === 'ConversationErrorEvent')).toMatchObject({ code: 'AgentStuckInLoopError' });
    const statuses = events.flatMap((event) => (event.kind === 'ConversationStateUpdateEvent' && event.key === 'execution_status' ? [event.value] : []));
    expect(statuses).toEqual(['running', 'stuck']);
  });

  it('lets a looping agent run on when stuck_detection is off', async () => {
    const { requests, info, events } = await conversations.run([], { responder: sameForever, request: { stuck_detection: false, max_iterations: 6 } });

    expect(requests).toHaveLength(6);
    expect(info.execution_status).toBe('error');
    expect(events.findLast((event) => event.kind === 'ConversationErrorEvent')).toMatchObject({ code: 'MaxIterationsReached' });
  });

  it('condenses and asks again when the prompt overflows the context window', async () => {
    const overflow: ScriptStep = {
      status: 400,
      body: { error: { message: "This model's maximum context length is 8192 tokens.", type: 'invalid_request_error', code: 'context_length_exceeded' } },
    };
    const { requests, info, events } = await conversations.run([
      toolCalls([{ name: 'terminal', arguments: { command: 'echo step one' } }]),
      overflow,
      text('The agent ran echo step one.'),
      text('done'),
    ]);

    expect(info.execution_status).toBe('finished');
    expect(JSON.stringify(requests[2]!.body.messages)).toContain('You keep the memory');
    const condensation = events.find((event) => event.kind === 'Condensation');
    expect(condensation).toMatchObject({ summary: 'The agent ran echo step one.', summary_offset: 2 });
    const forgotten = condensation?.kind === 'Condensation' ? condensation.forgotten_event_ids : [];
    expect(forgotten).toHaveLength(2);
    expect(JSON.stringify(requests[3]!.body.messages)).toContain('The agent ran echo step one.');
    expect(JSON.stringify(requests[3]!.body.messages)).not.toContain('"echo step one"');
  });

  it('condenses on the condenser max_tokens, with the condenser its own LLM and usage', async () => {
    const { requests, info, events } = await conversations.run(
      [toolCalls([{ name: 'terminal', arguments: { command: 'echo long' } }]), text('summary'), text('done')],
      { agent: { condenser: { kind: 'LLMSummarizingCondenser', llm: { model: 'condenser-model', base_url: 'ORIGIN/v1', usage_id: 'condenser' }, max_size: 240, max_tokens: 1, keep_first: 2 } } },
    );

    expect(info.execution_status).toBe('finished');
    expect(requests.map((request) => request.body.model)).toEqual(['scripted', 'condenser-model', 'scripted']);
    expect(events.some((event) => event.kind === 'Condensation')).toBe(true);
    expect(Object.keys(info.stats.usage_to_metrics).sort()).toEqual(['condenser', 'default']);
  });
});
