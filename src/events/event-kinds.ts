/** The fourteen event kinds of a conversation (spec table 2.2), one strict schema each. */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { ActionSchema } from './actions.js';
import {
  CriticResultSchema,
  EventSourceSchema,
  SecurityRiskSchema,
  eventShape,
  generatedWhenAbsent,
} from './common.js';
import {
  AnyThinkingBlockSchema,
  MessageSchema,
  MessageToolCallSchema,
  ReasoningItemModelSchema,
  TextContentSchema,
} from './content.js';
import { JsonValueSchema } from './json.js';
import { ObservationSchema } from './observations.js';
import { ToolDefinitionSchema } from './tools.js';

const agent = EventSourceSchema.default('agent');
const user = EventSourceSchema.default('user');
const environment = EventSourceSchema.default('environment');

export const CondensationSchema = z.strictObject({
  ...eventShape('Condensation', environment),
  /** Events removed from the view given to the LLM. */
  forgotten_event_ids: z.array(z.string()).default([]),
  summary: z.string().nullable().default(null),
  /** Where in the resulting view the summary goes; null: it is not inserted. */
  summary_offset: z.int().min(0).nullable().default(null),
  llm_response_id: z.string(),
});

export const CondensationRequestSchema = z.strictObject({
  ...eventShape('CondensationRequest', environment),
});

export const CondensationSummaryEventSchema = z.strictObject({
  ...eventShape('CondensationSummaryEvent', environment),
  summary: z.string(),
});

export const ConversationErrorEventSchema = z.strictObject({
  ...eventShape('ConversationErrorEvent', EventSourceSchema),
  /** Typically the error's type. */
  code: z.string(),
  detail: z.string(),
});

export const ConversationStateUpdateEventSchema = z.strictObject({
  ...eventShape('ConversationStateUpdateEvent', environment),
  /** A conversation state field name, or `full_state` when value is the whole state. */
  key: generatedWhenAbsent(z.string(), randomUUID),
  value: JsonValueSchema.default({}),
});

export const LLMCompletionLogEventSchema = z.strictObject({
  ...eventShape('LLMCompletionLogEvent', environment),
  /** Where the log would have been written, relative to the log directory. */
  filename: z.string(),
  /** The JSON-encoded log record. */
  log_data: z.string(),
  model_name: z.string().default('unknown'),
  usage_id: z.string().default('default'),
});

export const ActionEventSchema = z.strictObject({
  ...eventShape('ActionEvent', agent),
  thought: z.array(TextContentSchema),
  reasoning_content: z.string().nullable().default(null),
  thinking_blocks: z.array(AnyThinkingBlockSchema).default([]),
  responses_reasoning_item: ReasoningItemModelSchema.nullable().default(null),
  /** Null when the tool call could not be turned into an action. */
  action: ActionSchema.nullable().default(null),
  tool_name: z.string(),
  tool_call_id: z.string(),
  tool_call: MessageToolCallSchema,
  /** Shared by every action of one LLM response (parallel tool calls). */
  llm_response_id: z.string(),
  security_risk: SecurityRiskSchema.default('UNKNOWN'),
  critic_result: CriticResultSchema.nullable().default(null),
  summary: z.string().nullable().default(null),
});

export const MessageEventSchema = z.strictObject({
  ...eventShape('MessageEvent', EventSourceSchema),
  llm_message: MessageSchema,
  /** Null unless the agent wrote the message. */
  llm_response_id: z.string().nullable().default(null),
  activated_skills: z.array(z.string()).default([]),
  /** Content the agent context added to the message. */
  extended_content: z.array(TextContentSchema).default([]),
  sender: z.string().nullable().default(null),
  critic_result: CriticResultSchema.nullable().default(null),
});

export const AgentErrorEventSchema = z.strictObject({
  ...eventShape('AgentErrorEvent', agent),
  tool_name: z.string(),
  tool_call_id: z.string(),
  error: z.string(),
});

export const ObservationEventSchema = z.strictObject({
  ...eventShape('ObservationEvent', environment),
  tool_name: z.string(),
  tool_call_id: z.string(),
  observation: ObservationSchema,
  action_id: z.string(),
});

export const UserRejectObservationSchema = z.strictObject({
  ...eventShape('UserRejectObservation', environment),
  tool_name: z.string(),
  tool_call_id: z.string(),
  action_id: z.string(),
  rejection_reason: z.string().default('User rejected the action'),
  /** `user` in confirmation mode, `hook` when a pre-tool-use hook blocked the action. */
  rejection_source: z.enum(['user', 'hook']).default('user'),
});

export const SystemPromptEventSchema = z.strictObject({
  ...eventShape('SystemPromptEvent', agent),
  system_prompt: TextContentSchema,
  tools: z.array(ToolDefinitionSchema),
  /** Per-conversation context, sent as a second content block of the system message. */
  dynamic_context: TextContentSchema.nullable().default(null),
});

export const TokenEventSchema = z.strictObject({
  ...eventShape('TokenEvent', EventSourceSchema),
  prompt_token_ids: z.array(z.int()),
  response_token_ids: z.array(z.int()),
});

export const PauseEventSchema = z.strictObject({
  ...eventShape('PauseEvent', user),
});

export type Condensation = z.output<typeof CondensationSchema>;
export type CondensationRequest = z.output<typeof CondensationRequestSchema>;
export type CondensationSummaryEvent = z.output<typeof CondensationSummaryEventSchema>;
export type ConversationErrorEvent = z.output<typeof ConversationErrorEventSchema>;
export type ConversationStateUpdateEvent = z.output<typeof ConversationStateUpdateEventSchema>;
export type LLMCompletionLogEvent = z.output<typeof LLMCompletionLogEventSchema>;
export type ActionEvent = z.output<typeof ActionEventSchema>;
export type MessageEvent = z.output<typeof MessageEventSchema>;
export type AgentErrorEvent = z.output<typeof AgentErrorEventSchema>;
export type ObservationEvent = z.output<typeof ObservationEventSchema>;
export type UserRejectObservation = z.output<typeof UserRejectObservationSchema>;
export type SystemPromptEvent = z.output<typeof SystemPromptEventSchema>;
export type TokenEvent = z.output<typeof TokenEventSchema>;
export type PauseEvent = z.output<typeof PauseEventSchema>;
