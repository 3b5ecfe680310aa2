/**
 * Request bodies and query strings of the conversation routes, named after OpenHands' models
 * (StartConversationRequest, SendMessageRequest, ...). Unlike event schemas these are not strict:
 * OpenHands clients send fields we do not use (hook_config, user_id, agent_context, ...), and
 * FastAPI ignores unknown fields too. What we use is validated; the rest of `agent` is kept as sent.
 */
import { z } from 'zod';
import { ContentItemSchema, SecurityRiskSchema } from '../../events/index.js';
import { LimitQuerySchema, PageIdQuerySchema } from '../paging.js';
import { ConversationIdSchema } from './conversation-id.js';
import { EXECUTION_STATUSES } from './execution-status.js';
import { LlmSchema, refuseUnsupportedLlmSettings } from './llm-settings.js';
import { McpConfigSchema } from './mcp-config.js';
import { SecretsSchema } from './secrets.js';

export const ConversationExecutionStatusSchema = z.enum(EXECUTION_STATUSES);
export type ConversationExecutionStatus = z.output<typeof ConversationExecutionStatusSchema>;

export const ConversationSortOrderSchema = z.enum(['CREATED_AT', 'UPDATED_AT', 'CREATED_AT_DESC', 'UPDATED_AT_DESC']);
export type ConversationSortOrder = z.output<typeof ConversationSortOrderSchema>;

export const MessageRoleSchema = z.enum(['user', 'system', 'assistant', 'tool']);
export type MessageRole = z.output<typeof MessageRoleSchema>;

export const SendMessageRequestSchema = z.object({
  role: MessageRoleSchema.default('user'),
  content: z.array(ContentItemSchema).default([]),
  /** Start the agent loop after appending the message, if it is not running. */
  run: z.boolean().default(false),
});
export type SendMessageRequest = z.output<typeof SendMessageRequestSchema>;

export const ConfirmationPolicySchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('NeverConfirm') }),
  z.object({ kind: z.literal('AlwaysConfirm') }),
  z.object({
    kind: z.literal('ConfirmRisky'),
    threshold: SecurityRiskSchema.default('HIGH'),
    confirm_unknown: z.boolean().default(true),
  }),
]);
export type ConfirmationPolicy = z.output<typeof ConfirmationPolicySchema>;

/** Keys lower-case alphanumeric, values up to 256 characters (OpenHands' rule). */
export const TagsSchema = z.record(
  z.string().regex(/^[a-z0-9]+$/, 'Tag keys must be lowercase alphanumeric'),
  z.string().max(256),
);
export type Tags = z.output<typeof TagsSchema>;

export { LlmSchema, type Llm } from './llm-settings.js';

/** An LLM a request asks for: OpenHands' fields, minus the values this server cannot honour. */
export const RequestedLlmSchema = LlmSchema.superRefine(refuseUnsupportedLlmSettings);

export const ToolSpecSchema = z.looseObject({
  name: z.string().min(1),
  params: z.record(z.string(), z.unknown()).optional(),
});

export const AgentSchema = z.looseObject({
  kind: z.string().default('Agent'),
  llm: LlmSchema,
  /** The tools the LLM is offered, by OpenHands' names (`TerminalTool` or `terminal`); OpenHands' default set when absent. */
  tools: z.array(ToolSpecSchema).optional(),
  /** Keeps the chosen tools whose name this regex matches from its start (Python's `re.match`). */
  filter_tools_regex: z.string().nullish(),
  /** The built-ins every agent gets besides `tools`: FinishTool and ThinkTool when absent. */
  include_default_tools: z.array(z.string()).optional(),
});
export type Agent = z.output<typeof AgentSchema>;

/** A title given at start: the control plane passes on app conversations' titles, which may be this long. */
export const START_TITLE_MAX_LENGTH = 500;

export const WorkspaceSchema = z.object({
  working_dir: z
    .string()
    .min(1)
    .refine((dir) => !dir.includes('\0'), 'Must not contain NUL bytes'),
});

export { SecretsSchema, type Secrets } from './secrets.js';

/**
 * OpenHands' ACPAgent drives an external agent CLI over the Agent Client Protocol; none runs here.
 * `mcp_config` is checked here, not in AgentSchema: conversations stored before it was used keep
 * whatever they were given.
 */
const RunnableAgentSchema = AgentSchema.extend({ llm: RequestedLlmSchema, mcp_config: McpConfigSchema }).refine((agent) => agent.kind !== 'ACPAgent', {
  message: 'ACP agents (external agent CLIs) are not run by this server; use kind Agent',
  path: ['kind'],
});

export const StartConversationRequestSchema = z.object({
  agent: RunnableAgentSchema,
  workspace: WorkspaceSchema,
  conversation_id: ConversationIdSchema.nullish(),
  initial_message: SendMessageRequestSchema.nullish(),
  confirmation_policy: ConfirmationPolicySchema.default({ kind: 'NeverConfirm' }),
  max_iterations: z.int().min(1).default(500),
  stuck_detection: z.boolean().default(true),
  /** US dollars the conversation's LLM calls may cost; the run stops with an error when reached. */
  max_budget_per_task: z.number().positive().nullish(),
  secrets: SecretsSchema.default({}),
  tags: TagsSchema.default({}),
  /** Our extension: OpenHands sets titles only through PATCH. As long as the control plane's app conversations take. */
  title: z.string().max(START_TITLE_MAX_LENGTH).nullish(),
});
export type StartConversationRequest = z.output<typeof StartConversationRequestSchema>;

/** OpenHands' rule: surrounding whitespace is dropped, then 1 to 200 characters remain. */
export const TitleSchema = z.string().trim().min(1).max(200);

export const UpdateConversationRequestSchema = z.object({
  /** A string sets the title, null clears it, absent leaves it. */
  title: TitleSchema.nullish(),
  /** Replaces every tag when given. */
  tags: TagsSchema.nullish(),
});
export type UpdateConversationRequest = z.output<typeof UpdateConversationRequestSchema>;

export const ConversationSearchQuerySchema = z.object({
  page_id: PageIdQuerySchema,
  limit: LimitQuerySchema,
  status: ConversationExecutionStatusSchema.optional(),
  sort_order: ConversationSortOrderSchema.default('CREATED_AT_DESC'),
});
export type ConversationSearchQuery = z.output<typeof ConversationSearchQuerySchema>;

export const ConversationCountQuerySchema = z.object({
  status: ConversationExecutionStatusSchema.optional(),
});

/** `?ids=a&ids=b`: one value arrives as a string, several as an array. */
export const BatchGetConversationsQuerySchema = z.object({
  ids: z.preprocess((value) => (typeof value === 'string' ? [value] : value), z.array(ConversationIdSchema)),
});

export const ForkConversationRequestSchema = z.object({
  /** The fork's id; a new one when absent. 409 when a conversation already has it. */
  id: ConversationIdSchema.nullish(),
  /** The fork's title; the source's when absent. */
  title: TitleSchema.nullish(),
  /** The fork's tags; the source's when absent. */
  tags: TagsSchema.nullish(),
});
export type ForkConversationRequest = z.output<typeof ForkConversationRequestSchema>;

export const GenerateTitleRequestSchema = z.object({
  max_length: z.int().min(1).max(200).default(50),
  /** The LLM to ask; the conversation's own when absent. */
  llm: RequestedLlmSchema.nullish(),
});
export type GenerateTitleRequest = z.output<typeof GenerateTitleRequestSchema>;

export const AskAgentRequestSchema = z.object({ question: z.string().min(1) });

export const SwitchProfileRequestSchema = z.object({ profile_name: z.string().min(1) });

export const UpdateSecretsRequestSchema = z.object({ secrets: SecretsSchema });
