import { z } from 'zod';
import { ConversationIdSchema } from '../conversations/conversation-id.js';

export const ConversationPathSchema = z.object({ conversation_id: ConversationIdSchema });

export const EventPathSchema = z.object({ conversation_id: ConversationIdSchema, event_id: z.string().min(1) });
