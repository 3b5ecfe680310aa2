export { containerRequestFor } from './container-request.js';
export { holdSandbox, type HoldOptions } from './holds.js';
export { Reconciler } from './loop.js';
export type { ReconcilerOptions } from './reconciler-options.js';
export { applyPolicies, decidePolicy, type PolicyDecision } from './policies.js';
export { computeStatus, type ObservedStatus, type StatusInput } from './status.js';
