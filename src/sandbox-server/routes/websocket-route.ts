import type { z } from 'zod';
import { DomainError, RequestValidationError, invalidValuesFromZod } from '../../errors/index.js';

/** Path parameters of routes outside the OpenAPI router (WebSocket, proxy), validated the same way. */
export function parsePath<T extends z.ZodType>(schema: T, params: unknown): z.output<T> {
  const result = schema.safeParse(params);
  if (!result.success) throw new RequestValidationError(invalidValuesFromZod(result.error, 'path'));
  return result.data;
}

/** A plain GET on a WebSocket route is a client mistake: 426 says what to do instead. */
export function requireUpgrade(upgradeHeader: string | undefined): void {
  if (upgradeHeader?.toLowerCase() !== 'websocket') {
    throw new DomainError('upgrade_required', 'This route speaks WebSocket: connect with an Upgrade: websocket request');
  }
}
