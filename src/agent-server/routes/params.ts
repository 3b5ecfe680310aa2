import { z } from 'zod';
import { ConversationIdSchema } from '../../contracts/agent-server/conversation-id.js';
import { EVENT_ID_MAX_LENGTH } from '../../events/index.js';

export const ConversationPathSchema = z.object({ conversation_id: ConversationIdSchema });

export const EventPathSchema = z.object({ conversation_id: ConversationIdSchema, event_id: z.string().min(1).max(EVENT_ID_MAX_LENGTH) });
