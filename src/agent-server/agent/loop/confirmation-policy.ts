/**
 * When the agent must wait for the user before running the actions of one LLM response.
 * Rules of OpenHands: a lone `finish` or `think` never waits (they change nothing); otherwise
 * NeverConfirm never waits, AlwaysConfirm always does, and ConfirmRisky waits when any action's
 * risk reaches the threshold, or is UNKNOWN and `confirm_unknown` is set.
 */
import type { ConfirmationPolicy as RecordedConfirmationPolicy } from '../../../contracts/agent-server/conversation-requests.js';
import type { ActionEvent, SecurityRisk } from '../../../events/index.js';

export type ConfirmationPolicy =
  | { kind: 'NeverConfirm' }
  | { kind: 'AlwaysConfirm' }
  | { kind: 'ConfirmRisky'; threshold?: SecurityRisk; confirm_unknown?: boolean };

const RISK_RANK: Record<SecurityRisk, number> = { UNKNOWN: 0, LOW: 1, MEDIUM: 2, HIGH: 3 };

/** The policy with OpenHands' defaults filled in, as it is recorded in state updates. */
export function normalizeConfirmationPolicy(policy: ConfirmationPolicy): RecordedConfirmationPolicy {
  if (policy.kind !== 'ConfirmRisky') return { kind: policy.kind };
  return { kind: 'ConfirmRisky', threshold: policy.threshold ?? 'HIGH', confirm_unknown: policy.confirm_unknown ?? true };
}

export function needsConfirmation(policy: ConfirmationPolicy, actions: readonly ActionEvent[]): boolean {
  if (actions.length === 0) return false;
  const [only] = actions;
  if (actions.length === 1 && (only?.action?.kind === 'FinishAction' || only?.action?.kind === 'ThinkAction')) return false;
  switch (policy.kind) {
    case 'NeverConfirm':
      return false;
    case 'AlwaysConfirm':
      return true;
    case 'ConfirmRisky': {
      const threshold = RISK_RANK[policy.threshold ?? 'HIGH'];
      const confirmUnknown = policy.confirm_unknown ?? true;
      return actions.some((action) =>
        action.security_risk === 'UNKNOWN' ? confirmUnknown : RISK_RANK[action.security_risk] >= threshold,
      );
    }
  }
}
