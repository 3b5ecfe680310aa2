import type { ConversationRegistry } from '../conversations/registry.js';

/** Everything a conversation or event verb may use; built once by the app. */
export interface ConversationContext {
  conversations: ConversationRegistry;
}
