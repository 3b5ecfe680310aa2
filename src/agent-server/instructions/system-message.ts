/**
 * The system message of one conversation: the agent's own prompt, then what the conversation brings
 * (OpenHands' order): the repository's instructions, the names of its secrets, and the client's
 * `system_message_suffix` last.
 */
import { DEFAULT_SYSTEM_PROMPT } from '../agent/loop/system-prompt.js';

export interface SystemMessageParts {
  /** Always-on instructions (AGENTS.md, repo skills), each with the name it is known by. */
  instructions?: readonly { name: string; content: string }[];
  secrets?: readonly { name: string; description: string | null }[];
  suffix?: string | null;
}

export function systemMessage(parts: SystemMessageParts): string {
  const sections = [DEFAULT_SYSTEM_PROMPT];
  const instructions = parts.instructions ?? [];
  if (instructions.length > 0) {
    const blocks = instructions.map((item) => `[${item.name}]\n${item.content.trim()}`);
    sections.push(`<REPOSITORY_INSTRUCTIONS>\nInstructions the repository gives for working on it:\n\n${blocks.join('\n\n')}\n</REPOSITORY_INSTRUCTIONS>`);
  }
  const secrets = parts.secrets ?? [];
  if (secrets.length > 0) {
    const lines = secrets.map((secret) => `* $${secret.name}${secret.description ? `: ${secret.description}` : ''}`);
    sections.push(
      `<CUSTOM_SECRETS>\nThese environment variables hold secrets the user gave you; use them by name (e.g. in a command), ` +
        `never print them. Their values are hidden from you (shown as <secret_hidden>).\n${lines.join('\n')}\n</CUSTOM_SECRETS>`,
    );
  }
  if (parts.suffix && parts.suffix.trim() !== '') sections.push(parts.suffix.trim());
  return sections.join('\n\n');
}
