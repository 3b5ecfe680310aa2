/**
 * Which candidate deliveries a pass takes: in the order given (each webhook's oldest first, round
 * by round), as long as their webhook has a free slot of `perWebhook`, `busy` being the attempts
 * it already has in flight. Pure.
 */
export function pickWithinSlots(candidates: readonly { id: number; webhookId: string }[], busy: ReadonlyMap<string, number>, perWebhook: number): number[] {
  const taken = new Map<string, number>();
  const picked: number[] = [];
  for (const { id, webhookId } of candidates) {
    const used = (busy.get(webhookId) ?? 0) + (taken.get(webhookId) ?? 0);
    if (used >= perWebhook) continue;
    taken.set(webhookId, (taken.get(webhookId) ?? 0) + 1);
    picked.push(id);
  }
  return picked;
}
