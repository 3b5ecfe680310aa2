/**
 * The start task's repository steps, each run by the task runner with its status recorded first:
 * PREPARING_REPOSITORY (clone on the control plane, copy into the workspace), RUNNING_SETUP_SCRIPT
 * (`.openhands/setup.sh`, as the agent, in the repository, when there is one) and SETTING_UP_SKILLS
 * (what the agent-server will load: AGENTS.md, `.openhands/microagents`). Each returns the lines it
 * adds to the task's log, and throws a DomainError saying why it failed.
 */
import { posix } from 'node:path';
import { rm } from 'node:fs/promises';
import { UpstreamError } from '../../../errors/index.js';
import { logger } from '../../../logger.js';
import type { Secrets } from '../../../contracts/agent-server/secrets.js';
import type { AgentClient } from '../../agent-client.js';
import { cloneRepository } from './clone-repository.js';
import { copyIntoSandbox } from './copy-into-sandbox.js';
import { repositorySource } from './repository-source.js';

export interface RepositoryRequest {
  selected_repository?: string | null;
  selected_branch?: string | null;
  git_provider?: string | null;
}

const SETUP_TIMEOUT_SECONDS = 30 * 60;
/** Characters of the setup script's output kept in the log (its end). */
const SETUP_OUTPUT_CHARS = 20_000;

/** The conversation's working directory: the repository's folder in the workspace, or the workspace. */
export function conversationWorkingDir(workspace: string, request: RepositoryRequest, secrets: Secrets = {}): string {
  if (!request.selected_repository) return workspace;
  return posix.join(workspace, repositorySource({ ...request, selected_repository: request.selected_repository }, secrets).directory);
}

/** Where preparing a repository spent its time: the clone on the control plane, then the copy into the sandbox. */
export interface RepositoryTimings {
  cloneMs: number;
  copyMs: number;
}

export async function prepareRepository(
  client: AgentClient,
  input: { request: RepositoryRequest & { selected_repository: string }; secrets: Secrets; workspace: string; signal: AbortSignal },
): Promise<{ log: string[]; hasSetupScript: boolean; timings: RepositoryTimings }> {
  const began = performance.now();
  const source = repositorySource(input.request, input.secrets);
  const clone = await cloneRepository(source, input.signal);
  const cloned = performance.now();
  try {
    const copied = await copyIntoSandbox(client, clone.tree, posix.join(input.workspace, source.directory), input.signal);
    const timings = { cloneMs: cloned - began, copyMs: performance.now() - cloned };
    return { log: [...clone.log, ...copied], hasSetupScript: clone.hasSetupScript, timings };
  } finally {
    // Off the start's path: removing a large tree takes as long as writing it.
    void rm(clone.folder, { recursive: true, force: true }).catch((error: unknown) => logger.warn({ err: error, folder: clone.folder }, 'removing a clone folder failed'));
  }
}

export async function runSetupScript(client: AgentClient, repositoryDir: string): Promise<string[]> {
  const output = await client.executeBash({
    command: 'if [ -f .openhands/setup.sh ]; then bash .openhands/setup.sh 2>&1; else echo "no .openhands/setup.sh"; fi',
    cwd: repositoryDir,
    timeout: SETUP_TIMEOUT_SECONDS,
  });
  const printed = `${output.stdout ?? ''}${output.stderr ?? ''}`.slice(-SETUP_OUTPUT_CHARS).trimEnd();
  if (output.exit_code !== 0) {
    const why = output.exit_code === -1 ? `ran past ${SETUP_TIMEOUT_SECONDS} seconds` : `exited with ${output.exit_code}`;
    throw new UpstreamError(`.openhands/setup.sh ${why}: ${printed.slice(-1000)}`);
  }
  return ['$ bash .openhands/setup.sh', ...printed.split('\n')];
}

export async function setUpSkills(client: AgentClient, repositoryDir: string): Promise<string[]> {
  const skills = await client.projectSkills(repositoryDir);
  if (skills.length === 0) return ['skills: none in the repository'];
  return skills.map((skill) => `skill ${skill.name} (${skill.type}${skill.triggers.length > 0 ? `: ${skill.triggers.join(', ')}` : ''})`);
}
