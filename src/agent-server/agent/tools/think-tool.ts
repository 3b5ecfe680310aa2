/** The `think` tool: room for the agent to reason in the open; it changes nothing. */
import { ThinkActionSchema, ThinkObservationSchema, ThinkToolSchema } from '../../../events/index.js';
import {
  actionParameters,
  parseActionArguments,
  textContent,
  type ThinkAction,
  type ThinkObservation,
  type Tool,
} from './tool.js';

const DESCRIPTION = `Think something through. This gets no new information and changes nothing; the thought is only logged.

Use it when a step needs reasoning first: weighing ways to fix a bug you found, working out why tests fail, planning a refactoring or a design, or sorting hypotheses while debugging.`;

const THOUGHT_LOGGED = 'Your thought has been logged.';

export function createThinkTool(): Tool<ThinkAction, ThinkObservation> {
  return {
    name: 'think',
    description: DESCRIPTION,
    parameters: actionParameters(ThinkActionSchema, { thought: 'The thought to log.' }),
    actionKind: 'ThinkAction',
    observationKind: 'ThinkObservation',
    definition: ThinkToolSchema.parse({
      kind: 'ThinkTool',
      title: 'think',
      description: DESCRIPTION,
      action_type: 'ThinkAction',
      observation_type: 'ThinkObservation',
      annotations: {
        title: 'think',
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    }),
    parseArguments: (args) => parseActionArguments('think', ThinkActionSchema, args),
    execute: async () =>
      ThinkObservationSchema.parse({ kind: 'ThinkObservation', content: [textContent(THOUGHT_LOGGED)] }),
    close: async () => {},
  };
}
