import { z } from '@hono/zod-openapi';
import { SendMessageRequestSchema, TagsSchema } from '../../contracts/agent-server/conversation-requests.js';
import { MetricsSnapshotSchema } from '../../contracts/agent-server/llm-metrics.js';
import { START_TASK_STATUSES } from '../../contracts/start-task.js';
import { LimitQuerySchema, PageIdQuerySchema, pageSchema } from '../../contracts/paging.js';
import { storableDateTime } from './common.js';
import { SandboxStatusSchema } from './sandbox.js';
import { AppConversationSecretsSchema } from './secret-hosts.js';

const DateTimeSchema = z.string().openapi({ format: 'date-time' });
const DateTimeQuerySchema = storableDateTime({ offset: true, local: true }).optional();

/**
 * POST /api/v1/app-conversations. Like FastAPI (and unlike events) unknown fields are dropped, so
 * OpenHands clients that send fields we do not act on (processors, plugins, ...) still work.
 */
export const AppConversationStartRequestSchema = z
  .object({
    sandbox_id: z.string().min(1).nullish(),
    conversation_id: z.uuid().nullish(),
    initial_message: SendMessageRequestSchema.nullish(),
    system_message_suffix: z.string().nullish(),
    llm_model: z.string().min(1).nullish(),
    llm_api_key: z.string().min(1).nullish().openapi({
      description:
        "Our extension: the conversation's own key for the server's LLM (LLM_BASE_URL, or the model's provider), instead of LLM_API_KEY. The control plane's LLM relay adds it to the agent's calls: it never enters the sandbox, and is never shown back.",
    }),
    selected_repository: z.string().nullish().openapi({
      description:
        'Cloned into the workspace before the conversation starts (start task status PREPARING_REPOSITORY), and the conversation works in the clone: ' +
        'a full http(s) URL (any self-hosted server), or owner/name on git_provider. The clone is made by the control plane and streamed into the sandbox; ' +
        'its token comes from secrets (GITHUB_TOKEN, GITLAB_TOKEN, BITBUCKET_TOKEN, or GIT_TOKEN and GIT_USERNAME for a URL) and is never written to .git/config',
      example: 'https://git.example.com/team/app.git',
    }),
    selected_branch: z.string().nullish().openapi({ description: "The branch checked out; the repository's default branch when absent" }),
    git_provider: z.string().nullish().openapi({ description: 'Where owner/name is looked up: github (the default), gitlab or bitbucket. Not used for a URL' }),
    title: z.string().max(500).nullish(),
    trigger: z.string().nullish(),
    pr_number: z.array(z.number().int()).default([]),
    tags: TagsSchema.default({}),
    /**
     * Set as variables in the agent's shell and masked in all that leaves it: plain values, or
     * StaticSecret / LookupSecret sources; a StaticSecret with `hosts` is brokered (a placeholder in the shell).
     */
    secrets: AppConversationSecretsSchema.default({}).openapi({
      description:
        "Variables of the agent's shell under their names, their values masked (<secret_hidden>) in observations, events, LLM requests, logs and downloads: " +
        'plain strings, or StaticSecret / LookupSecret sources (a StaticSecret with hosts is brokered). Kept by the control plane only until the start task ends',
    }),
  })
  .openapi('AppConversationStartRequest');
export type AppConversationStartRequest = z.output<typeof AppConversationStartRequestSchema>;

export const AppConversationStartTaskStatusSchema = z
  .enum(START_TASK_STATUSES)
  .openapi('AppConversationStartTaskStatus');
export type AppConversationStartTaskStatus = z.output<typeof AppConversationStartTaskStatusSchema>;

export const AppConversationStartTaskSchema = z
  .object({
    id: z.string(),
    created_by_user_id: z.string().nullable(),
    status: AppConversationStartTaskStatusSchema,
    detail: z.string().nullable(),
    app_conversation_id: z.string().nullable(),
    sandbox_id: z.string().nullable(),
    agent_server_url: z.string().nullable(),
    log: z.string().nullable().openapi({
      description:
        'Our extension: what preparing the repository did and printed (clone, .openhands/setup.sh, skills found); null when the task had no repository step',
    }),
    /** The request as received, secrets left out. */
    request: z.record(z.string(), z.unknown()),
    created_at: DateTimeSchema,
    updated_at: DateTimeSchema,
  })
  .openapi('AppConversationStartTask');
export type AppConversationStartTask = z.output<typeof AppConversationStartTaskSchema>;

export const AppConversationSchema = z
  .object({
    id: z.string(),
    created_by_user_id: z.string().nullable(),
    sandbox_id: z.string(),
    selected_repository: z.string().nullable(),
    selected_branch: z.string().nullable(),
    git_provider: z.string().nullable(),
    title: z.string().nullable(),
    trigger: z.string().nullable(),
    pr_number: z.array(z.number().int()),
    llm_model: z.string().nullable(),
    tags: z.record(z.string(), z.string()),
    /** What its LLM calls used and cost (OpenHands' MetricsSnapshot), read live like execution_status. */
    metrics: MetricsSnapshotSchema.nullable(),
    created_at: DateTimeSchema,
    updated_at: DateTimeSchema,
    sandbox_status: SandboxStatusSchema.nullable(),
    /** Read live from the sandbox's agent-server; null unless the sandbox is RUNNING. */
    execution_status: z.string().nullable(),
    conversation_url: z.string().nullable(),
    session_api_key: z.string().nullable(),
    sub_conversation_ids: z.array(z.string()),
  })
  .openapi('AppConversation');
export type AppConversation = z.output<typeof AppConversationSchema>;

export const AppConversationPageSchema = pageSchema(AppConversationSchema).openapi('AppConversationPage');
export const AppConversationStartTaskPageSchema = pageSchema(AppConversationStartTaskSchema).openapi('AppConversationStartTaskPage');

export const AppConversationSortOrderSchema = z
  .enum(['CREATED_AT', 'CREATED_AT_DESC', 'UPDATED_AT', 'UPDATED_AT_DESC', 'TITLE', 'TITLE_DESC'])
  .openapi('AppConversationSortOrder');
export type AppConversationSortOrder = z.output<typeof AppConversationSortOrderSchema>;

export const AppConversationFilterSchema = z.object({
  title__contains: z.string().optional(),
  created_at__gte: DateTimeQuerySchema,
  created_at__lt: DateTimeQuerySchema,
  updated_at__gte: DateTimeQuerySchema,
  updated_at__lt: DateTimeQuerySchema,
});
export type AppConversationFilter = z.output<typeof AppConversationFilterSchema>;

export const SearchAppConversationsQuerySchema = AppConversationFilterSchema.extend({
  sort_order: AppConversationSortOrderSchema.default('CREATED_AT_DESC'),
  page_id: PageIdQuerySchema,
  limit: LimitQuerySchema,
});

export const UpdateAppConversationRequestSchema = z
  .object({ title: z.string().max(500).nullish(), tags: TagsSchema.nullish() })
  .openapi('UpdateAppConversationRequest');

export const StartTaskFilterSchema = z.object({
  status: AppConversationStartTaskStatusSchema.optional(),
});
export const SearchStartTasksQuerySchema = StartTaskFilterSchema.extend({
  page_id: PageIdQuerySchema,
  limit: LimitQuerySchema,
});
