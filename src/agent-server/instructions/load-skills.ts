/**
 * The skills a project (the conversation's workspace, where the repository was cloned) brings:
 *
 *   AGENTS.md                          a repo skill, `agents`
 *   .openhands/microagents/repo.md     a repo skill, `repo` (or its front matter's name)
 *   .openhands/microagents/*.md        knowledge skills (with `triggers:`), else repo skills
 *   .openhands/skills/*.md             the same, under OpenHands' newer folder name
 *
 * Read with the agent's rights (the workspace is the agent's: it may plant links to files it may
 * not read). A file missing, unreadable or too large is skipped; the others still load.
 */
import { basename, join } from 'node:path';
import { isErrno, type AgentFs } from '../agent-fs/index.js';
import { logger } from '../../logger.js';
import { skillFromFile, type Skill } from './skill.js';

const MAX_SKILL_BYTES = 256 * 1024;
/** Files read from one skills folder at most, in name order. */
const MAX_SKILL_FILES = 100;
const SKILL_FOLDERS = ['.openhands/microagents', '.openhands/skills'];

export async function loadProjectSkills(projectDir: string, files: AgentFs): Promise<Skill[]> {
  const skills: Skill[] = [];
  const agents = await readSkillFile(files, join(projectDir, 'AGENTS.md'));
  if (agents !== null) skills.push({ ...skillFromFile('agents', agents, 'AGENTS.md'), type: 'repo', triggers: [] });
  for (const folder of SKILL_FOLDERS) {
    const entries = await files.readDir(join(projectDir, folder)).catch(() => []);
    const names = entries
      .filter((entry) => entry.type === 'file' && entry.name.endsWith('.md') && entry.name.toLowerCase() !== 'readme.md')
      .map((entry) => entry.name)
      .sort()
      .slice(0, MAX_SKILL_FILES);
    for (const name of names) {
      const text = await readSkillFile(files, join(projectDir, folder, name));
      if (text !== null) skills.push(skillFromFile(basename(name, '.md'), text, `${folder}/${name}`));
    }
  }
  // A name is one skill: the first found wins (AGENTS.md before the folders).
  return skills.filter((skill, index) => skills.findIndex((other) => other.name === skill.name) === index && skill.content !== '');
}

async function readSkillFile(files: AgentFs, path: string): Promise<string | null> {
  try {
    return (await files.readFile(path, { maxBytes: MAX_SKILL_BYTES })).toString('utf8');
  } catch (error) {
    if (!isErrno(error, 'ENOENT', 'ENOTDIR')) logger.warn({ path, reason: (error as Error).message }, 'skipping a skill file that cannot be read');
    return null;
  }
}
