/**
 * The instructions one conversation works with: the skills its workspace brings (load-skills.ts)
 * and those of its `agent.agent_context` (OpenHands' AgentContext: `skills`, each with a keyword
 * `trigger` or none for always-on, `system_message_suffix`, `user_message_suffix`). The workspace
 * is read once per conversation per process, at the first message or run, after the repository
 * was cloned into it; its skills come after the context's, which win a name they share.
 */
import { z } from 'zod';
import type { AgentUser } from '../agent-user.js';
import { createAgentFs } from '../agent-fs/index.js';
import type { ConversationMetadata } from '../conversations/metadata.js';
import { loadProjectSkills } from './load-skills.js';
import type { Skill } from './skill.js';

export interface ConversationInstructions {
  skills: Skill[];
  systemMessageSuffix: string | null;
  userMessageSuffix: string | null;
}

const ContextSkillSchema = z.looseObject({
  name: z.string().min(1),
  content: z.string(),
  trigger: z.looseObject({ keywords: z.array(z.string()).default([]) }).nullish(),
});

/** Read leniently: a context this server cannot read contributes nothing rather than failing the run. */
const AgentContextSchema = z
  .looseObject({
    skills: z.array(z.unknown()).default([]),
    system_message_suffix: z.string().nullish(),
    user_message_suffix: z.string().nullish(),
  })
  .nullish()
  .catch(null);

/** The context's skills, suffixes, and the agent's own `system_message_suffix` (the control plane's older place for it). */
export function instructionsFromContext(agent: ConversationMetadata['agent']): ConversationInstructions {
  const context = AgentContextSchema.parse(agent['agent_context']);
  const skills = (context?.skills ?? []).flatMap((raw): Skill[] => {
    const parsed = ContextSkillSchema.safeParse(raw);
    if (!parsed.success) return [];
    const triggers = (parsed.data.trigger?.keywords ?? []).map((keyword) => keyword.toLowerCase()).filter((keyword) => keyword !== '');
    const type = triggers.length > 0 ? 'knowledge' : 'repo';
    return [{ name: parsed.data.name, type, content: parsed.data.content, triggers, source: 'agent_context' }];
  });
  const ownSuffix = agent['system_message_suffix'];
  return {
    skills,
    systemMessageSuffix: context?.system_message_suffix ?? (typeof ownSuffix === 'string' ? ownSuffix : null),
    userMessageSuffix: context?.user_message_suffix ?? null,
  };
}

const loaded = new WeakMap<object, Promise<ConversationInstructions>>();

/** The conversation's instructions, loaded once per `holder` (the registry's conversation entry). */
export function conversationInstructions(holder: { metadata: ConversationMetadata }, agentUser: AgentUser | undefined): Promise<ConversationInstructions> {
  let instructions = loaded.get(holder);
  if (instructions === undefined) {
    instructions = (async () => {
      const own = instructionsFromContext(holder.metadata.agent);
      const project = await loadProjectSkills(holder.metadata.workspace.working_dir, createAgentFs({ user: agentUser }));
      const names = new Set(own.skills.map((skill) => skill.name));
      return { ...own, skills: [...own.skills, ...project.filter((skill) => !names.has(skill.name))] };
    })();
    loaded.set(holder, instructions);
  }
  return instructions;
}
