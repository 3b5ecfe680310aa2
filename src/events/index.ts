/**
 * The event model of a conversation: one strict zod schema per kind, combined here into the
 * discriminated union that validates, types and documents every stored or streamed event.
 */
import { z } from 'zod';
import {
  ActionEventSchema,
  AgentErrorEventSchema,
  CondensationRequestSchema,
  CondensationSchema,
  CondensationSummaryEventSchema,
  ConversationErrorEventSchema,
  ConversationStateUpdateEventSchema,
  LLMCompletionLogEventSchema,
  MessageEventSchema,
  ObservationEventSchema,
  PauseEventSchema,
  SystemPromptEventSchema,
  TokenEventSchema,
  UserRejectObservationSchema,
} from './event-kinds.js';

export * from './actions.js';
export * from './common.js';
export * from './content.js';
export * from './event-kinds.js';
export * from './json.js';
export * from './message-search-text.js';
export * from './observations.js';
export * from './timestamp.js';
export * from './tools.js';

/** The kinds the search endpoint serves, in the order of spec table 2.2. */
export const EVENT_KINDS = [
  'Condensation',
  'CondensationRequest',
  'CondensationSummaryEvent',
  'ConversationErrorEvent',
  'ConversationStateUpdateEvent',
  'LLMCompletionLogEvent',
  'ActionEvent',
  'MessageEvent',
  'AgentErrorEvent',
  'ObservationEvent',
  'UserRejectObservation',
  'SystemPromptEvent',
  'TokenEvent',
  'PauseEvent',
] as const;

export const EventKindSchema = z.enum(EVENT_KINDS);
export type EventKind = z.output<typeof EventKindSchema>;

export const EventSchema = z.discriminatedUnion('kind', [
  CondensationSchema,
  CondensationRequestSchema,
  CondensationSummaryEventSchema,
  ConversationErrorEventSchema,
  ConversationStateUpdateEventSchema,
  LLMCompletionLogEventSchema,
  ActionEventSchema,
  MessageEventSchema,
  AgentErrorEventSchema,
  ObservationEventSchema,
  UserRejectObservationSchema,
  SystemPromptEventSchema,
  TokenEventSchema,
  PauseEventSchema,
]);
export type Event = z.output<typeof EventSchema>;
export type EventInput = z.input<typeof EventSchema>;
