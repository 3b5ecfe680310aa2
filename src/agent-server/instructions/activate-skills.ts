/**
 * Which knowledge skills a user message brings in (OpenHands' rule): those with a trigger in the
 * message's text, case-insensitive, not already brought in earlier in the conversation. Each joins
 * the message as extended content, which the LLM sees after the message's own text; the agent
 * context's `user_message_suffix` joins every user message.
 */
import type { TextContent } from '../../events/index.js';
import type { Skill } from './skill.js';

export interface Activation {
  /** Names of the skills brought in, in the order of the conversation's skills. */
  activated: string[];
  extendedContent: TextContent[];
}

export function activateSkills(input: { text: string; skills: readonly Skill[]; alreadyActive: readonly string[]; userMessageSuffix?: string | null }): Activation {
  const lowered = input.text.toLowerCase();
  const activated: string[] = [];
  const extendedContent: TextContent[] = [];
  for (const skill of input.skills) {
    if (skill.type !== 'knowledge' || input.alreadyActive.includes(skill.name) || activated.includes(skill.name)) continue;
    const trigger = skill.triggers.find((candidate) => lowered.includes(candidate));
    if (trigger === undefined) continue;
    activated.push(skill.name);
    extendedContent.push(textContent(
      `<EXTRA_INFO>\nThe following information has been included based on a keyword match for "${trigger}".\n` +
        `It may or may not be relevant to the user's request.\n\n${skill.content}\n</EXTRA_INFO>`,
    ));
  }
  if (input.userMessageSuffix && input.userMessageSuffix.trim() !== '') extendedContent.push(textContent(input.userMessageSuffix.trim()));
  return { activated, extendedContent };
}

function textContent(text: string): TextContent {
  return { type: 'text', text, cache_prompt: false };
}
