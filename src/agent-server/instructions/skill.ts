/**
 * A skill (OpenHands' word; once "microagent"): a named piece of instructions. A `repo` skill is
 * always part of the system message; a `knowledge` skill joins a user message that holds one of
 * its `triggers` (case-insensitive), once per conversation.
 */
import { parseFrontMatter } from './front-matter.js';

export type SkillType = 'repo' | 'knowledge';

export interface Skill {
  name: string;
  type: SkillType;
  content: string;
  /** Lower-cased; empty for repo skills. */
  triggers: string[];
  /** Where it came from: a file's path, or `agent_context`. */
  source: string;
}

/**
 * The skill a file holds: its front matter's `triggers` make it knowledge, else it is a repo skill
 * (OpenHands' rule for files without `type`); `name` defaults to the file's name.
 */
export function skillFromFile(defaultName: string, text: string, source: string): Skill {
  const { fields, body } = parseFrontMatter(text);
  const name = typeof fields['name'] === 'string' && fields['name'] !== '' ? fields['name'] : defaultName;
  const rawTriggers = fields['triggers'] ?? fields['keywords'];
  const triggers = (Array.isArray(rawTriggers) ? rawTriggers : typeof rawTriggers === 'string' ? [rawTriggers] : [])
    .map((trigger) => trigger.toLowerCase())
    .filter((trigger) => trigger !== '');
  const type: SkillType = triggers.length > 0 && fields['type'] !== 'repo' ? 'knowledge' : 'repo';
  return { name, type, content: body.trim(), triggers: type === 'knowledge' ? triggers : [], source };
}
