/**
 * `planning_file_editor` (OpenHands' PlanningFileEditorTool), for a planning agent: the file editor
 * that may view anything in the workspace but change only its plan file, PLAN.md, which it finds
 * made with the plan's section headers. The plan is `<workspace>/.agents_tmp/PLAN.md` by default
 * (`<workspace>/PLAN.md` when one is there already, OpenHands' older place), or `plan_path`.
 */
import path from 'node:path';
import { z } from 'zod';
import {
  FileEditorObservationSchema,
  PlanningFileEditorActionSchema,
  PlanningFileEditorObservationSchema,
  PlanningFileEditorToolSchema,
} from '../../../events/index.js';
import { type AgentFs, isErrno } from '../../agent-fs/index.js';
import type { AgentUser } from '../../agent-user.js';
import { createFileEditorTool } from './file-editor/file-editor-tool.js';
import { parseActionArguments, textContent, type Tool } from './tool.js';

type PlanningFileEditorAction = z.output<typeof PlanningFileEditorActionSchema>;
type PlanningFileEditorObservation = z.output<typeof PlanningFileEditorObservationSchema>;

export interface PlanningFileEditorOptions {
  workspaceDir: string;
  files: AgentFs;
  agentUser?: AgentUser;
  /** Absolute path of the plan; the workspace's default when absent. */
  planPath?: string;
}

const PLAN_SECTIONS = ['OBJECTIVE', 'CONTEXT SUMMARY', 'APPROACH OVERVIEW', 'IMPLEMENTATION STEPS', 'TESTING AND VALIDATION'];

export const PLAN_HEADERS = PLAN_SECTIONS.map((title, i) => `# ${i + 1}. ${title}\n`).join('\n');

/** The plan the tool edits when no plan_path is given. */
export async function defaultPlanPath(files: AgentFs, workspaceDir: string): Promise<string> {
  const legacy = path.join(workspaceDir, 'PLAN.md');
  const hasLegacy = await files.stat(legacy).then(() => true, () => false);
  return hasLegacy ? legacy : path.join(workspaceDir, '.agents_tmp', 'PLAN.md');
}

export async function createPlanningFileEditorTool(
  options: PlanningFileEditorOptions,
): Promise<Tool<PlanningFileEditorAction, PlanningFileEditorObservation>> {
  const { files, workspaceDir } = options;
  const planPath = options.planPath ?? (await defaultPlanPath(files, workspaceDir));
  await files.writeFile(planPath, PLAN_HEADERS, { exclusive: true, makeParents: true }).catch((error: unknown) => {
    if (!isErrno(error, 'EEXIST')) throw error;
  });
  const editor = createFileEditorTool({ workspaceDir, agentUser: options.agentUser });
  const description =
    `${editor.description}\n\nYou are planning, not implementing:\n` +
    '* `view` works on any file or directory in the workspace.\n' +
    `* Every other command works only on your plan, ${planPath}; it already holds the plan's section headers: fill them in.`;

  async function execute(action: PlanningFileEditorAction): Promise<PlanningFileEditorObservation> {
    if (action.command !== 'view' && path.resolve(workspaceDir, action.path) !== planPath) {
      return PlanningFileEditorObservationSchema.parse({
        kind: 'PlanningFileEditorObservation',
        command: action.command,
        path: action.path,
        is_error: true,
        content: [textContent(`Only the plan ${planPath} may be changed; \`${action.command}\` of ${action.path} was refused. Use \`view\` to read other files.`)],
      });
    }
    const observation = FileEditorObservationSchema.parse(await editor.execute({ ...action, kind: 'FileEditorAction' }));
    return PlanningFileEditorObservationSchema.parse({ ...observation, kind: 'PlanningFileEditorObservation' });
  }

  return {
    name: 'planning_file_editor',
    description,
    parameters: editor.parameters,
    actionKind: 'PlanningFileEditorAction',
    observationKind: 'PlanningFileEditorObservation',
    definition: PlanningFileEditorToolSchema.parse({
      kind: 'PlanningFileEditorTool',
      title: 'planning_file_editor',
      description,
      action_type: 'PlanningFileEditorAction',
      observation_type: 'PlanningFileEditorObservation',
      annotations: { title: 'planning_file_editor', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    }),
    parseArguments: (args) => parseActionArguments('planning_file_editor', PlanningFileEditorActionSchema, args),
    execute,
    close: () => editor.close(),
  };
}
