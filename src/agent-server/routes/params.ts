import { z } from 'zod';
import { ConversationIdSchema } from '../../contracts/agent-server/conversation-id.js';

export const ConversationPathSchema = z.object({ conversation_id: ConversationIdSchema });

export const EventPathSchema = z.object({ conversation_id: ConversationIdSchema, event_id: z.string().min(1) });
