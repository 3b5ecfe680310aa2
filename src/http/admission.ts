import type { DomainError } from '../errors/index.js';

/** What admission reads of a request, the same whether node:http or Hono carries it. */
export interface Arrival {
  method: string;
  /** As the server sees it: the `Host` header's name, the path normalised. */
  url: URL;
  /** A request header by its lower-case name. */
  header(name: string): string | undefined;
}

/** One step a request passes before it is served: the refusal to answer, or undefined to let it on. */
export type AdmissionStep = (arrival: Arrival) => DomainError | undefined;

/** The first refusal among `steps`, taken in order; undefined when every step lets the request on. */
export function firstRefusal(steps: readonly AdmissionStep[], arrival: Arrival): DomainError | undefined {
  for (const step of steps) {
    const refusal = step(arrival);
    if (refusal) return refusal;
  }
  return undefined;
}
