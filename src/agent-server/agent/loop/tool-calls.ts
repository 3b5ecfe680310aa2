/**
 * Between the LLM and the tools: the function definitions the LLM is offered, and the events an
 * LLM response's tool calls become.
 *
 * As in OpenHands, every function takes two extra optional arguments that are not the tool's own:
 * `security_risk` (the model's estimate, which ConfirmRisky acts on; not asked of read-only tools)
 * and `summary` (a few words for clients). They are taken out before the tool parses the rest.
 */
import {
  ActionEventSchema,
  AgentErrorEventSchema,
  SecurityRiskSchema,
  type ActionEvent,
  type AgentErrorEvent,
  type SecurityRisk,
} from '../../../events/index.js';
import type { ChatTool, LlmResponse, LlmToolCall } from '../llm/index.js';
import type { AnyTool, ToolAction } from '../tools/index.js';

const SECURITY_RISK_PARAMETER = {
  type: 'string',
  enum: ['LOW', 'MEDIUM', 'HIGH'],
  description:
    'Your estimate of the risk of this action: LOW (reads or changes nothing important), MEDIUM (changes files ' +
    'or state in the workspace), HIGH (may destroy data, touch secrets or systems outside the workspace).',
};

const SUMMARY_PARAMETER = {
  type: 'string',
  description: 'About ten words saying what this action does, e.g. "List the Python files of the project".',
};

export function chatTools(tools: readonly AnyTool[]): ChatTool[] {
  return tools.map((tool) => {
    const own = ownProperties(tool);
    const properties: Record<string, unknown> = { ...own };
    if (!isReadOnly(tool) && !('security_risk' in own)) properties.security_risk = SECURITY_RISK_PARAMETER;
    if (!('summary' in own)) properties.summary = SUMMARY_PARAMETER;
    return {
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: { ...tool.parameters, properties } },
    };
  });
}

export interface ResponseEvents {
  /** In call order: an ActionEvent per call, each failed one followed by its AgentErrorEvent. */
  events: (ActionEvent | AgentErrorEvent)[];
  /** The executable actions among them. */
  actions: ActionEvent[];
}

/**
 * Every call becomes an ActionEvent sharing the response's id; the response's text, reasoning and
 * thinking go on the first one only. A call naming no tool we have, or whose arguments the tool
 * refuses, becomes an ActionEvent without action plus an AgentErrorEvent: the model sees its call
 * answered by the error and can correct itself. Calls after `finish` are dropped: the run ends there.
 */
export function eventsFromToolCalls(response: LlmResponse, tools: ReadonlyMap<string, AnyTool>): ResponseEvents {
  const result: ResponseEvents = { events: [], actions: [] };
  callsUpToFinish(response.tool_calls, tools).forEach((call, index) => {
    const first = index === 0;
    const text = response.content ?? '';
    const common = {
      kind: 'ActionEvent' as const,
      thought: first && text.trim() !== '' ? [{ type: 'text' as const, text }] : [],
      reasoning_content: first ? response.reasoning_content : null,
      thinking_blocks: first ? response.thinking_blocks : [],
      responses_reasoning_item: first ? response.responses_reasoning_item : null,
      tool_name: call.name,
      tool_call_id: call.id,
      tool_call: call,
      llm_response_id: response.id,
    };
    const parsed = parseCall(call, tools.get(call.name), tools);
    if (parsed.ok) {
      const action = ActionEventSchema.parse({ ...common, action: parsed.action, security_risk: parsed.securityRisk, summary: parsed.summary });
      result.events.push(action);
      result.actions.push(action);
    } else {
      result.events.push(
        ActionEventSchema.parse({ ...common, action: null }),
        AgentErrorEventSchema.parse({ kind: 'AgentErrorEvent', tool_name: call.name, tool_call_id: call.id, error: parsed.error }),
      );
    }
  });
  return result;
}

type ParsedCall =
  | { ok: true; action: ToolAction; securityRisk: SecurityRisk; summary: string | null }
  | { ok: false; error: string };

function parseCall(call: LlmToolCall, tool: AnyTool | undefined, tools: ReadonlyMap<string, AnyTool>): ParsedCall {
  if (tool === undefined) {
    return { ok: false, error: `Tool "${call.name}" not found. Available tools: ${[...tools.keys()].join(', ')}.` };
  }
  const args = jsonObject(call.arguments);
  if (args === undefined) return { ok: false, error: `Invalid arguments for tool "${call.name}": expected a JSON object.` };
  const own = ownProperties(tool);
  const { security_risk: risk, summary, ...rest } = args;
  const parsed = tool.parseArguments({
    ...rest,
    ...('security_risk' in own && risk !== undefined ? { security_risk: risk } : {}),
    ...('summary' in own && summary !== undefined ? { summary } : {}),
  });
  if (!parsed.ok) return parsed;
  const knownRisk = SecurityRiskSchema.safeParse(risk);
  return {
    ok: true,
    action: parsed.action,
    securityRisk: knownRisk.success ? knownRisk.data : 'UNKNOWN',
    summary: typeof summary === 'string' && summary.trim() !== '' ? summary : null,
  };
}

function callsUpToFinish(calls: readonly LlmToolCall[], tools: ReadonlyMap<string, AnyTool>): LlmToolCall[] {
  const finish = calls.findIndex((call) => tools.get(call.name)?.actionKind === 'FinishAction');
  return finish === -1 ? [...calls] : calls.slice(0, finish + 1);
}

function ownProperties(tool: AnyTool): Record<string, unknown> {
  const properties = tool.parameters.properties;
  return typeof properties === 'object' && properties !== null ? (properties as Record<string, unknown>) : {};
}

function isReadOnly(tool: AnyTool): boolean {
  return tool.definition.annotations?.readOnlyHint === true;
}

function jsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = text.trim() === '' ? {} : JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
