export {
  createAgentRunner,
  type AgentRunner,
  type AgentRunnerOptions,
  type ConfirmationResponse,
} from './agent-runner.js';
export type { CondenserOptions } from './condensation.js';
export type { ConfirmationPolicy } from './confirmation-policy.js';
export type { RunnerStateChange } from './state-change.js';
export { DEFAULT_SYSTEM_PROMPT } from './system-prompt.js';
