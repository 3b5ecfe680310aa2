/**
 * Replaces secret values wherever they appear in text or in the strings of a JSON value (an event),
 * longest value first so that a value holding another is hidden whole.
 *
 * Values shorter than MIN_MASKED_LENGTH are not masked: a one- or two-letter "secret" would cut
 * holes in every word and hide nothing. The fields that name things rather than carry text (kind,
 * ids, source, role, type, timestamp) are left alone, so a masked event still parses as its kind.
 * Images are left alone too (a screenshot's base64, an image's data URL), as OpenHands leaves them:
 * a value found there is a chance match of bytes, and replacing it would only break the image.
 */
import { SECRET_MASK } from '../../contracts/agent-server/secrets.js';

export const MIN_MASKED_LENGTH = 3;

const STRUCTURAL_FIELDS = new Set(['kind', 'id', 'source', 'role', 'type', 'timestamp', 'tool_call_id', 'action_id', 'llm_response_id', 'screenshot_data']);

const IMAGE_DATA_URL = /^data:image\/[\w.+-]+;base64,/;

/** The values to mask, longest first, without those too short to mask. */
export function maskableValues(values: Iterable<string>): string[] {
  return [...new Set(values)].filter((value) => value.length >= MIN_MASKED_LENGTH).sort((a, b) => b.length - a.length);
}

export function maskText(text: string, values: readonly string[]): string {
  let masked = text;
  for (const value of values) if (masked.includes(value)) masked = masked.replaceAll(value, SECRET_MASK);
  return masked;
}

/** A copy of `value` with every secret hidden in its strings; `value` itself when none appears. */
export function maskJson<T>(value: T, values: readonly string[]): T {
  if (values.length === 0) return value;
  return maskNode(value, values) as T;
}

function maskNode(node: unknown, values: readonly string[]): unknown {
  if (typeof node === 'string') return IMAGE_DATA_URL.test(node) ? node : maskText(node, values);
  if (Array.isArray(node)) {
    const items = node.map((item) => maskNode(item, values));
    return items.every((item, index) => item === node[index]) ? node : items;
  }
  if (typeof node !== 'object' || node === null) return node;
  let changed = false;
  const copy: Record<string, unknown> = {};
  for (const [field, item] of Object.entries(node)) {
    copy[field] = STRUCTURAL_FIELDS.has(field) ? item : maskNode(item, values);
    changed ||= copy[field] !== item;
  }
  return changed ? copy : node;
}
