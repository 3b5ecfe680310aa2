/**
 * The client's request and response types, inferred from the server's own zod models so that the
 * two cannot disagree. Type-only imports: none of the server's code ends up in a client bundle.
 */
import type { z } from 'zod';
import type { EventSearchQuerySchema } from '../contracts/agent-server/event-queries.js';
import type { SendMessageRequestSchema } from '../contracts/agent-server/conversation-requests.js';
import type { BashOutputSchema, ExecuteBashRequestSchema } from '../contracts/agent-server/bash.js';
import type { Event } from '../events/index.js';
import type {
  AppConversationFilterSchema,
  AppConversationSchema,
  AppConversationStartRequestSchema,
  AppConversationStartTaskSchema,
  SearchAppConversationsQuerySchema,
  SearchStartTasksQuerySchema,
  StartTaskFilterSchema,
  UpdateAppConversationRequestSchema,
} from '../sandbox-server/models/app-conversation.js';
import type { SuccessSchema } from '../sandbox-server/models/common.js';
import type { LifecycleEventSchema, SearchEventsQuerySchema } from '../sandbox-server/models/lifecycle-event.js';
import type {
  CreatedWebhookSchema,
  CreateWebhookRequestSchema,
  SearchDeliveriesQuerySchema,
  UpdateWebhookRequestSchema,
  WebhookDeliverySchema,
  WebhookSchema,
} from '../sandbox-server/models/webhook.js';
import type { CreateSandboxSpecRequestSchema, SandboxSpecInfoSchema, SearchSandboxSpecsQuerySchema } from '../sandbox-server/models/sandbox-spec.js';
import type { SandboxInfoSchema, SandboxStatusSchema, SearchSandboxesQuerySchema, StartSandboxRequestSchema } from '../sandbox-server/models/sandbox.js';
import type { SandboxLlmUsageSchema } from '../sandbox-server/models/llm-usage.js';
import type { SearchSnapshotsQuerySchema, SnapshotInfoSchema } from '../sandbox-server/models/snapshot.js';
import type { PreviewTokenSchema, SandboxPortSchema } from '../sandbox-server/models/sandbox-port.js';
import type { EngineInfoSchema, RegisterEngineRequestSchema, SearchEnginesQuerySchema } from '../sandbox-server/models/engine.js';
import type { SettingsSchema, UpdateSettingsRequestSchema } from '../sandbox-server/models/settings.js';
import type { SandboxEgressInfoSchema, UpdateSandboxRequestSchema } from '../sandbox-server/models/egress-policy.js';

/** A query as the server reads it, every parameter optional (the server fills in its defaults). */
type QueryOf<S extends z.ZodType> = Partial<z.output<S>>;

export type { Page } from '../contracts/paging.js';

export type Success = z.output<typeof SuccessSchema>;

export type SandboxSpecInfo = z.output<typeof SandboxSpecInfoSchema>;
export type CreateSandboxSpecRequest = z.input<typeof CreateSandboxSpecRequestSchema>;
export type SearchSandboxSpecsQuery = QueryOf<typeof SearchSandboxSpecsQuerySchema>;

export type SandboxInfo = z.output<typeof SandboxInfoSchema>;
export type SandboxLlmUsage = z.output<typeof SandboxLlmUsageSchema>;
export type SandboxEgressInfo = z.output<typeof SandboxEgressInfoSchema>;
export type UpdateSandboxRequest = z.input<typeof UpdateSandboxRequestSchema>;
export type SandboxStatus = z.output<typeof SandboxStatusSchema>;
export type SearchSandboxesQuery = QueryOf<typeof SearchSandboxesQuerySchema>;
export type StartSandboxRequest = z.input<typeof StartSandboxRequestSchema>;

export type SandboxPort = z.output<typeof SandboxPortSchema>;
export type PreviewToken = z.output<typeof PreviewTokenSchema>;

export type SnapshotInfo = z.output<typeof SnapshotInfoSchema>;
export type SearchSnapshotsQuery = QueryOf<typeof SearchSnapshotsQuerySchema>;

export type EngineInfo = z.output<typeof EngineInfoSchema>;
export type RegisterEngineRequest = z.input<typeof RegisterEngineRequestSchema>;
export type SearchEnginesQuery = QueryOf<typeof SearchEnginesQuerySchema>;

export type Settings = z.output<typeof SettingsSchema>;
export type UpdateSettingsRequest = z.input<typeof UpdateSettingsRequestSchema>;

export type AppConversation = z.output<typeof AppConversationSchema>;
export type AppConversationStartRequest = z.input<typeof AppConversationStartRequestSchema>;
export type AppConversationStartTask = z.output<typeof AppConversationStartTaskSchema>;
export type UpdateAppConversationRequest = z.input<typeof UpdateAppConversationRequestSchema>;
export type SearchAppConversationsQuery = QueryOf<typeof SearchAppConversationsQuerySchema>;
export type AppConversationFilter = QueryOf<typeof AppConversationFilterSchema>;
export type SearchStartTasksQuery = QueryOf<typeof SearchStartTasksQuerySchema>;
export type StartTaskFilter = QueryOf<typeof StartTaskFilterSchema>;

export type SendMessageRequest = z.input<typeof SendMessageRequestSchema>;
export type EventSearchQuery = QueryOf<typeof EventSearchQuerySchema>;
export type ConversationEvent = Event;
/** The query of OpenHands' app-server event routes: the kind filter is named `kind__eq` there. */
export type OpenHandsEventSearchQuery = Omit<EventSearchQuery, 'kind' | 'source' | 'body'> & { kind__eq?: string };
export type OpenHandsEventFilter = Omit<OpenHandsEventSearchQuery, 'page_id' | 'limit' | 'sort_order'>;

export type ExecuteBashRequest = z.input<typeof ExecuteBashRequestSchema>;
export type BashOutput = z.output<typeof BashOutputSchema>;

export type LifecycleEvent = z.output<typeof LifecycleEventSchema>;
export type LifecycleEventType = LifecycleEvent['type'];
export type SearchLifecycleEventsQuery = QueryOf<typeof SearchEventsQuerySchema>;

export type Webhook = z.output<typeof WebhookSchema>;
export type CreatedWebhook = z.output<typeof CreatedWebhookSchema>;
export type CreateWebhookRequest = z.input<typeof CreateWebhookRequestSchema>;
export type UpdateWebhookRequest = z.input<typeof UpdateWebhookRequestSchema>;
export type WebhookDelivery = z.output<typeof WebhookDeliverySchema>;
export type SearchWebhookDeliveriesQuery = QueryOf<typeof SearchDeliveriesQuerySchema>;
