import type { MessageEvent } from '../../events/index.js';
import type { AgentUser } from '../agent-user.js';
import type { ConversationMetadata } from '../conversations/metadata.js';
import { activateSkills } from './activate-skills.js';
import { conversationInstructions } from './conversation-skills.js';

/**
 * A user's message as it is recorded: with the knowledge skills it brings in (`activated_skills`,
 * their text in `extended_content`) and the metadata change that remembers them for the conversation.
 */
export async function withActivatedSkills(
  conversation: { metadata: ConversationMetadata },
  agentUser: AgentUser | undefined,
  event: MessageEvent,
): Promise<{ event: MessageEvent; change: Partial<ConversationMetadata> }> {
  if (event.source !== 'user') return { event, change: {} };
  const { skills, userMessageSuffix } = await conversationInstructions(conversation, agentUser);
  const text = event.llm_message.content.map((item) => (item.type === 'text' ? item.text : '')).join('\n');
  const alreadyActive = conversation.metadata.activated_knowledge_skills;
  const activation = activateSkills({ text, skills, alreadyActive, userMessageSuffix });
  return {
    event: { ...event, activated_skills: activation.activated, extended_content: [...event.extended_content, ...activation.extendedContent] },
    change: activation.activated.length > 0 ? { activated_knowledge_skills: [...alreadyActive, ...activation.activated] } : {},
  };
}
