import type { z } from 'zod';
import type { InputPart, InvalidValue } from './domain-error.js';

/**
 * The invalid values of a failed zod parse of `part` (below `fieldPrefix` within it), worded as
 * pydantic words them so OpenHands clients read them unchanged.
 */
export function invalidValuesFromZod(error: z.ZodError, part: InputPart, fieldPrefix: (string | number)[] = []): InvalidValue[] {
  const items: InvalidValue[] = [];
  for (const issue of error.issues) {
    const field = [...fieldPrefix, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        items.push({ in: part, field: [...field, key], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
      }
      continue;
    }
    if (issue.code === 'invalid_type' && /received undefined$/.test(issue.message)) {
      items.push({ in: part, field, msg: 'Field required', type: 'missing' });
      continue;
    }
    items.push({ in: part, field, msg: issue.message, type: issueType(issue) });
  }
  return items;
}

function issueType(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return `${issue.expected}_type`;
    case 'too_small':
      return issue.origin === 'string' || issue.origin === 'array' ? 'too_short' : issue.inclusive ? 'greater_than_equal' : 'greater_than';
    case 'too_big':
      return issue.origin === 'string' || issue.origin === 'array' ? 'too_long' : issue.inclusive ? 'less_than_equal' : 'less_than';
    case 'invalid_value':
      return 'enum';
    case 'invalid_format':
      return `${issue.format}_parsing`;
    case 'invalid_union':
      return 'union_tag_invalid';
    default:
      return 'value_error';
  }
}
