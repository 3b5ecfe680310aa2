import { z } from 'zod';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * True for a value that survives JSON.stringify/JSON.parse unchanged: finite numbers, plain objects
 * and arrays of JSON values, no cycles.
 */
export function isJsonValue(value: unknown, ancestors: Set<object> = new Set()): value is JsonValue {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (typeof value !== 'object' || ancestors.has(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && prototype !== Object.prototype && prototype !== null) return false;
  ancestors.add(value);
  const items: unknown[] = Array.isArray(value) ? value : Object.values(value);
  const ok = items.every((item) => isJsonValue(item, ancestors));
  ancestors.delete(value);
  return ok;
}

/**
 * Any JSON value. Not `z.json()`: that one is recursive and sends the OpenAPI generator of
 * @hono/zod-openapi into endless recursion, so we check with a refinement and document it as "any".
 */
export const JsonValueSchema = z.unknown().refine(isJsonValue, 'Expected a JSON value');

/** A free-form JSON object (metadata, tool arguments, MCP schemas): any keys, JSON values only. */
export const JsonObjectSchema = z.record(z.string(), JsonValueSchema);
