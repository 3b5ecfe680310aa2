/**
 * The user the agent's commands run as, when it is not the agent-server's own. In a sandbox the
 * agent-server runs as root and the agent as an unprivileged user, so nothing the agent runs can
 * read the agent-server's memory or files (the session keys presented to it among them).
 */
import { readFile } from 'node:fs/promises';
import { isSessionKeySetting } from './config.js';

export interface AgentUser {
  name: string;
  uid: number;
  gid: number;
  home: string;
}

/** The entry of `name` in an /etc/passwd text, or undefined. */
export function agentUserFromPasswd(name: string, passwd: string): AgentUser | undefined {
  for (const line of passwd.split('\n')) {
    const [user, , uid, gid, , home] = line.split(':');
    if (user === name && uid !== undefined && gid !== undefined) return { name, uid: Number(uid), gid: Number(gid), home: home ?? '/' };
  }
  return undefined;
}

export async function lookupAgentUser(name: string): Promise<AgentUser> {
  const user = agentUserFromPasswd(name, await readFile('/etc/passwd', 'utf8'));
  if (!user) throw new Error(`no user ${name} in /etc/passwd`);
  return user;
}

/**
 * spawn() options and environment that make a child process the agent's: `env` without the session
 * key settings (whoever runs the process, code the agent runs must not read what guards this server).
 */
export function spawnAsAgent(user: AgentUser | undefined, env: Record<string, string | undefined>) {
  const agentEnv = Object.fromEntries(Object.entries(env).filter(([name]) => !isSessionKeySetting(name)));
  if (!user) return { env: agentEnv };
  return { uid: user.uid, gid: user.gid, env: { ...agentEnv, HOME: user.home, USER: user.name, LOGNAME: user.name } };
}
