/** The `finish` tool: the agent says it is done, with its final message to the user. */
import { FinishActionSchema, FinishObservationSchema, FinishToolSchema } from '../../../events/index.js';
import {
  actionParameters,
  parseActionArguments,
  textContent,
  type FinishAction,
  type FinishObservation,
  type Tool,
} from './tool.js';

const DESCRIPTION = `Signal that the task is complete, or that you cannot go further.

Use it when you have done what the user asked, or when you are blocked (missing information, access or tools). The message is shown to the user: summarize what you did and what came of it, what is left for the user to do, and any question you need answered.`;

export function createFinishTool(): Tool<FinishAction, FinishObservation> {
  return {
    name: 'finish',
    description: DESCRIPTION,
    parameters: actionParameters(FinishActionSchema, { message: 'The final message to the user.' }),
    actionKind: 'FinishAction',
    observationKind: 'FinishObservation',
    definition: FinishToolSchema.parse({
      kind: 'FinishTool',
      title: 'finish',
      description: DESCRIPTION,
      action_type: 'FinishAction',
      observation_type: 'FinishObservation',
      annotations: {
        title: 'finish',
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    }),
    parseArguments: (args) => parseActionArguments('finish', FinishActionSchema, args),
    execute: async (action) =>
      FinishObservationSchema.parse({ kind: 'FinishObservation', content: [textContent(action.message)] }),
    close: async () => {},
  };
}
