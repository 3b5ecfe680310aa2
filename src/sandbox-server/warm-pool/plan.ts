import type { SandboxStatus } from '../../contracts/sandbox.js';

/** A spec that wants a warm pool, with its current fingerprint. */
export interface WarmPoolWant {
  specId: string;
  size: number;
  fingerprint: string;
}

/** An unclaimed pool member not yet wanted deleted. */
export interface WarmPoolMember {
  id: string;
  specId: string;
  fingerprint: string;
  status: SandboxStatus;
  /** Its engine takes no new sandboxes (cordoned or draining): it must not wait there to be claimed. */
  displaced: boolean;
}

export interface WarmPoolPlan {
  /** Members to delete: stale (spec or image changed), failed, displaced, surplus, or of a spec with no pool. */
  retire: string[];
  /** One spec id per member to add. */
  add: string[];
}

/**
 * Decides how every pool gets back to its size: keep members that are current and healthy, up to
 * the size, retire the rest, then add members where pools are short, never holding more than `cap`
 * members across all pools (kept members count first; pools fill in the order given). A failed
 * member is retired and replaced at the next sweep, not at once, so a broken image costs one create
 * per sweep per slot rather than a tight loop. A displaced member (its engine cordoned or draining)
 * is retired and replaced at once: placement puts the replacement on an engine that takes new
 * sandboxes, and a drain neither waits for nor moves a member.
 */
export function planWarmPools(wants: readonly WarmPoolWant[], members: readonly WarmPoolMember[], cap: number): WarmPoolPlan {
  const retire: string[] = [];
  const kept = new Map<string, number>();
  const failed = new Map<string, number>();
  const wantBySpec = new Map(wants.map((want) => [want.specId, want]));
  // Ready members first, so that a pool shrinking keeps the ones that can be claimed now.
  const ordered = [...members].sort((a, b) => Number(b.status === 'RUNNING') - Number(a.status === 'RUNNING'));
  for (const member of ordered) {
    const want = wantBySpec.get(member.specId);
    const count = kept.get(member.specId) ?? 0;
    const broken = member.status === 'ERROR' || member.status === 'MISSING';
    if (broken) failed.set(member.specId, (failed.get(member.specId) ?? 0) + 1);
    if (!want || member.fingerprint !== want.fingerprint || broken || member.displaced || count >= want.size) retire.push(member.id);
    else kept.set(member.specId, count + 1);
  }
  let total = [...kept.values()].reduce((sum, count) => sum + count, 0);
  const add: string[] = [];
  for (const want of wants) {
    const missing = want.size - (kept.get(want.specId) ?? 0) - (failed.get(want.specId) ?? 0);
    for (let i = 0; i < missing && total < cap; i++, total++) add.push(want.specId);
  }
  return { retire, add };
}
