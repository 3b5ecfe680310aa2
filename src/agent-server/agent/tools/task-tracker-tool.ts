/**
 * The `task_tracker` tool: the agent's plan for this conversation. `plan` replaces the whole list,
 * `view` shows it. It lives in memory; a loop that resumes a conversation can pass the list of the
 * last TaskTrackerObservation back in as `initialTasks`.
 */
import {
  TaskTrackerActionSchema,
  TaskTrackerObservationSchema,
  TaskTrackerToolSchema,
  type TaskItem,
} from '../../../events/index.js';
import {
  actionParameters,
  parseActionArguments,
  textContent,
  type TaskTrackerAction,
  type TaskTrackerObservation,
  type Tool,
} from './tool.js';

export interface TaskTrackerToolOptions {
  initialTasks?: TaskItem[];
}

const DESCRIPTION = `Keep a task list for multi-step work, so you and the user can see the plan and the progress.

* \`view\` shows the current list. \`plan\` replaces it with \`task_list\`: always send the whole list, including unchanged and finished tasks.
* Each task has a short \`title\`, optional \`notes\`, and a \`status\`: \`todo\`, \`in_progress\` or \`done\`.
* Use it when the work has several steps or parts, or the user asks for a plan. Skip it for a single simple step.
* Mark a task \`in_progress\` when you start it (one at a time) and \`done\` only when it is fully done: not while tests fail or errors remain. Add tasks for work you discover; remove tasks that no longer apply.`;

export function createTaskTrackerTool(
  options: TaskTrackerToolOptions = {},
): Tool<TaskTrackerAction, TaskTrackerObservation> {
  let tasks: TaskItem[] = options.initialTasks ?? [];

  function execute(action: TaskTrackerAction): TaskTrackerObservation {
    if (action.command === 'plan') {
      tasks = action.task_list;
      return observation('plan', `Task list has been updated with ${tasks.length} item(s).\n\n${formatTasks(tasks)}`);
    }
    return observation('view', formatTasks(tasks));
  }

  function observation(command: TaskTrackerAction['command'], text: string): TaskTrackerObservation {
    return TaskTrackerObservationSchema.parse({
      kind: 'TaskTrackerObservation',
      command,
      task_list: tasks,
      content: [textContent(text)],
    });
  }

  return {
    name: 'task_tracker',
    description: DESCRIPTION,
    parameters: actionParameters(TaskTrackerActionSchema, {
      command: '`view` shows the task list; `plan` replaces it with `task_list`.',
      task_list:
        'For `plan`: the whole new task list, in order. ' +
        'Each task: {title, notes?, status: todo | in_progress | done}.',
    }),
    actionKind: 'TaskTrackerAction',
    observationKind: 'TaskTrackerObservation',
    definition: TaskTrackerToolSchema.parse({
      kind: 'TaskTrackerTool',
      title: 'task_tracker',
      description: DESCRIPTION,
      action_type: 'TaskTrackerAction',
      observation_type: 'TaskTrackerObservation',
      annotations: {
        title: 'task_tracker',
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    }),
    parseArguments: (args) => parseActionArguments('task_tracker', TaskTrackerActionSchema, args),
    execute: async (action) => execute(action),
    close: async () => {},
  };
}

function formatTasks(tasks: TaskItem[]): string {
  if (tasks.length === 0) return 'The task list is empty. Use the `plan` command to create one.';
  const lines = tasks.map((task, i) => {
    const notes = task.notes === '' ? '' : `\n   ${task.notes.replaceAll('\n', '\n   ')}`;
    return `${i + 1}. [${task.status}] ${task.title}${notes}`;
  });
  return `# Task List\n\n${lines.join('\n')}`;
}
