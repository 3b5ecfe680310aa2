import { z } from 'zod';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * How deep JSON may nest: objects and arrays within each other, counting the outermost as 1. Far
 * more than any event or setting needs, and far below what JSON.stringify and JSON.parse survive
 * (a few thousand levels overflow their stack), so anything we accept can be written and read back.
 */
export const MAX_JSON_DEPTH = 100;

/**
 * True for a value that survives JSON.stringify/JSON.parse unchanged: finite numbers, plain objects
 * and arrays of JSON values, no cycles, at most MAX_JSON_DEPTH levels. Walks with its own stack, so
 * a value nested deeper than the call stack allows is refused instead of crashing the caller.
 */
export function isJsonValue(value: unknown): value is JsonValue {
  // Each entry is a value to check, at its depth; `leave` marks an object whose children are done.
  const pending: Array<{ value: unknown; depth: number } | { leave: object }> = [{ value, depth: 0 }];
  const ancestors = new Set<object>();
  while (pending.length > 0) {
    const next = pending.pop()!;
    if ('leave' in next) {
      ancestors.delete(next.leave);
      continue;
    }
    const item = next.value;
    if (item === null || typeof item === 'string' || typeof item === 'boolean') continue;
    if (typeof item === 'number') {
      if (!Number.isFinite(item)) return false;
      continue;
    }
    if (typeof item !== 'object' || ancestors.has(item) || next.depth >= MAX_JSON_DEPTH) return false;
    const prototype: unknown = Object.getPrototypeOf(item);
    if (!Array.isArray(item) && prototype !== Object.prototype && prototype !== null) return false;
    ancestors.add(item);
    pending.push({ leave: item });
    for (const child of Array.isArray(item) ? item : Object.values(item)) pending.push({ value: child, depth: next.depth + 1 });
  }
  return true;
}

/**
 * Any JSON value. Not `z.json()`: that one is recursive and sends the OpenAPI generator of
 * @hono/zod-openapi into endless recursion, so we check with a refinement and document it as "any".
 */
export const JsonValueSchema = z.unknown().refine(isJsonValue, `Expected a JSON value nested at most ${MAX_JSON_DEPTH} levels deep`);

/** A free-form JSON object (metadata, tool arguments, MCP schemas): any keys, JSON values only. */
export const JsonObjectSchema = z.record(z.string(), JsonValueSchema);

/**
 * How deeply the JSON text nests, scanning at most until `limit` is passed (then `limit + 1`).
 * Reads the text without parsing it, so a body nested too deep is refused before JSON.parse could
 * overflow its stack. Brackets inside strings do not count.
 */
export function jsonTextDepth(text: string, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === 0x5c) i++;
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) {
      inString = true;
    } else if (code === 0x5b || code === 0x7b) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (code === 0x5d || code === 0x7d) {
      depth--;
    }
  }
  return deepest;
}
