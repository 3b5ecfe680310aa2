import type { z } from 'zod';
import type { InvalidValue } from './domain-error.js';

/** Maps zod issues to FastAPI-style entries so OpenHands clients can read them unchanged. */
export function validationItemsFromZod(error: z.ZodError, locPrefix: (string | number)[]): InvalidValue[] {
  const items: InvalidValue[] = [];
  for (const issue of error.issues) {
    const loc = [...locPrefix, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        items.push({ loc: [...loc, key], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
      }
      continue;
    }
    if (issue.code === 'invalid_type' && /received undefined$/.test(issue.message)) {
      items.push({ loc, msg: 'Field required', type: 'missing' });
      continue;
    }
    items.push({ loc, msg: issue.message, type: issueType(issue) });
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
