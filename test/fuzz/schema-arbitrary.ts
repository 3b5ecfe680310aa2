/**
 * Values for a JSON Schema: mostly valid ones (so requests reach the handlers behind validation),
 * mixed at every level with hostile ones: wrong types, values past the bounds, NUL bytes and odd
 * Unicode, very long strings, very deep nesting.
 */
import fc from 'fast-check';
import { resolveSchema, type JsonSchema } from './openapi-operations.js';

/**
 * A value chosen by the caller for a named field (safe paths, harmless commands, known ids). An
 * `exact` hint is never swapped for a hostile value: for fields where anything else would reach
 * outside the test (an LLM's base_url).
 */
export type Hint = (name: string, schema: JsonSchema) => { arbitrary: fc.Arbitrary<unknown>; exact?: boolean } | undefined;

export interface SchemaContext {
  document: unknown;
  hint: Hint;
}

/** How often a node is replaced by a hostile value: 1 in (VALID_WEIGHT + 1). */
const VALID_WEIGHT = 12;
/** Below this depth, optional fields and nested values stop being generated. */
const MAX_DEPTH = 6;

export function schemaValue(ctx: SchemaContext, schema: JsonSchema, name = '', depth = 0): fc.Arbitrary<unknown> {
  const hinted = ctx.hint(name, schema);
  if (hinted?.exact) return hinted.arbitrary;
  if (hinted) return fc.oneof({ arbitrary: hinted.arbitrary, weight: VALID_WEIGHT }, { arbitrary: hostileValue(), weight: 1 });
  return fc.oneof({ arbitrary: validValue(ctx, schema, depth), weight: VALID_WEIGHT }, { arbitrary: hostileValue(schema), weight: 1 });
}

function validValue(ctx: SchemaContext, raw: JsonSchema, depth: number): fc.Arbitrary<unknown> {
  const schema = resolveSchema(ctx.document, raw);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives && alternatives.length > 0) {
    return fc.oneof(...alternatives.map((alternative) => validValue(ctx, alternative, depth)));
  }
  if (schema.allOf && schema.allOf.length > 0) return validValue(ctx, mergeAll(ctx, schema.allOf), depth);
  const types = schema.type === undefined ? inferTypes(schema) : [schema.type].flat();
  if (types.length === 0) return anyJson(depth);
  return fc.oneof(...types.map((type) => valueOfType(ctx, schema, type, depth)));
}

function inferTypes(schema: JsonSchema): string[] {
  if (schema.properties || schema.additionalProperties !== undefined) return ['object'];
  if (schema.items) return ['array'];
  return [];
}

function mergeAll(ctx: SchemaContext, parts: JsonSchema[]): JsonSchema {
  const merged: JsonSchema = { properties: {}, required: [] };
  for (const part of parts.map((p) => resolveSchema(ctx.document, p))) {
    Object.assign(merged.properties!, part.properties ?? {});
    merged.required!.push(...(part.required ?? []));
    merged.type ??= part.type;
  }
  return merged;
}

function valueOfType(ctx: SchemaContext, schema: JsonSchema, type: string, depth: number): fc.Arbitrary<unknown> {
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return integerValue(schema);
    case 'number':
      return fc.double({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1000, noNaN: true, noDefaultInfinity: true });
    case 'string':
      return stringValue(schema);
    case 'array': {
      if (depth >= MAX_DEPTH) return fc.constant([]);
      const items = schema.items ? schemaValue(ctx, schema.items, '', depth + 1) : anyJson(depth + 1);
      return fc.array(items, { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 4, 4) });
    }
    case 'object':
      return objectValue(ctx, schema, depth);
    default:
      return anyJson(depth);
  }
}

/** Small integers within the bounds, and now and then an edge: a bound itself, 2^31, 2^53. */
function integerValue(schema: JsonSchema): fc.Arbitrary<number> {
  const min = schema.minimum ?? (schema.exclusiveMinimum === undefined ? -(2 ** 53 - 1) : schema.exclusiveMinimum + 1);
  const max = schema.maximum ?? (schema.exclusiveMaximum === undefined ? 2 ** 53 - 1 : schema.exclusiveMaximum - 1);
  const edges = [min, max, 0, 1, 2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 53 - 1, -(2 ** 31) - 1].filter((n) => n >= min && n <= max);
  const small = fc.integer({ min: bound(schema.minimum, schema.exclusiveMinimum, 1, -1000), max: bound(schema.maximum, schema.exclusiveMaximum, -1, 1000) });
  return fc.oneof({ arbitrary: small, weight: 4 }, { arbitrary: fc.constantFrom(...edges), weight: 1 });
}

function bound(inclusive: number | undefined, exclusive: number | undefined, step: number, fallback: number): number {
  if (inclusive !== undefined) return Math.max(Math.min(inclusive, 2 ** 31 - 1), -(2 ** 31));
  if (exclusive !== undefined) return exclusive + step;
  return fallback;
}

function stringValue(schema: JsonSchema): fc.Arbitrary<string> {
  switch (schema.format) {
    case 'uuid':
      return fc.uuid();
    case 'date-time':
      return fc.oneof(
        { arbitrary: fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString()), weight: 4 },
        { arbitrary: fc.constantFrom('0000-01-01T00:00:00Z', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z', '2024-02-29T00:00:00+14:00', '1969-12-31T23:59:59.999-12:00'), weight: 1 },
      );
    case 'binary':
      return fc.string();
  }
  if (schema.pattern !== undefined) {
    try {
      return fc.stringMatching(new RegExp(schema.pattern, 'u')).filter((s) => s.length <= (schema.maxLength ?? Infinity) && s.length >= (schema.minLength ?? 0));
    } catch {
      // A pattern fast-check cannot generate from: plain strings, often invalid, are still worth sending.
    }
  }
  return fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.max(schema.minLength ?? 0, Math.min(schema.maxLength ?? 24, 24)) });
}

function objectValue(ctx: SchemaContext, schema: JsonSchema, depth: number): fc.Arbitrary<unknown> {
  const properties = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  const record: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, property] of Object.entries(properties)) {
    if (depth >= MAX_DEPTH && !required.has(name)) continue;
    record[name] = schemaValue(ctx, property, name, depth + 1);
  }
  const fixed = fc.record(record, { requiredKeys: Object.keys(record).filter((name) => required.has(name)) as never[] });
  const extras =
    schema.additionalProperties === false || depth >= MAX_DEPTH
      ? fc.constant({})
      : fc.dictionary(fc.string({ maxLength: 12 }), typeof schema.additionalProperties === 'object' ? schemaValue(ctx, schema.additionalProperties, '', depth + 1) : anyJson(depth + 1), { maxKeys: 2 });
  return fc.tuple(fixed, extras).map(([known, extra]) => ({ ...extra, ...(known as object) }));
}

/** Any JSON value, shallow. */
function anyJson(depth: number): fc.Arbitrary<unknown> {
  return depth >= MAX_DEPTH ? fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)) : fc.jsonValue({ maxDepth: 2 });
}

/** Strings that have broken servers: NUL bytes, lone surrogates, bidi marks, very long ones. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '\u0000',
    'a\u0000b',
    'true\u0000',
    '%00',
    '\ud800',
    '\udfff\ud800',
    '\u202e\u2066',
    '\ufeff',
    '\uffff',
    '😀'.repeat(40),
    '../../../../etc/passwd',
    '',
    ' ',
    'null',
    '0000-01-01T00:00:00Z',
    '9999-12-31T23:59:59.999Z',
    '+275760-09-13T00:00:00.000Z',
    '-000001-01-01T00:00:00Z',
    '2024-02-30T25:61:61Z',
    '99999999999999999999999',
    '-1',
    '1e400',
  ),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ maxLength: 20 }).map((s) => `${s}\u0000${s}`),
  fc.integer({ min: 256, max: 400 }).map((n) => 'n'.repeat(n)),
  fc.constant('x'.repeat(100_000)),
);

/** Numbers past every usual bound: 32-bit and 64-bit edges, fractions, negative zero. */
export const hostileNumber: fc.Arbitrary<number> = fc.constantFrom(
  2 ** 31,
  2 ** 31 - 1,
  -(2 ** 31) - 1,
  2 ** 53,
  2 ** 63,
  -1,
  0,
  -0,
  0.5,
  1e308,
  -1e308,
  Number.MIN_VALUE,
);

/**
 * JSON nested far deeper than any schema allows, thousands of levels. Kept as a marker until
 * serialized by `jsonText`: JSON.stringify itself would overflow the stack on such a value.
 */
export class DeepJson {
  constructor(
    readonly depth: number,
    readonly kind: 'array' | 'object',
  ) {}

  toJSON(): string {
    return `\u0001deep:${this.kind}:${this.depth}\u0001`;
  }
}

/** JSON.stringify, with every DeepJson written out in full. */
export function jsonText(value: unknown): string {
  return (JSON.stringify(value) ?? 'null').replace(/"\\u0001deep:(array|object):(\d+)\\u0001"/g, (_, kind: string, depth: string) =>
    kind === 'array' ? `${'['.repeat(Number(depth))}1${']'.repeat(Number(depth))}` : `${'{"a":'.repeat(Number(depth))}1${'}'.repeat(Number(depth))}`,
  );
}

function hostileValue(schema: JsonSchema = {}): fc.Arbitrary<unknown> {
  return fc.oneof(
    { arbitrary: hostileString, weight: 4 },
    { arbitrary: hostileNumber, weight: 3 },
    { arbitrary: fc.constantFrom(true, false, null, [], {}, [null], { '': null }), weight: 2 },
    { arbitrary: fc.tuple(fc.integer({ min: 1000, max: 5000 }), fc.constantFrom('array' as const, 'object' as const)).map(([depth, kind]) => new DeepJson(depth, kind)), weight: 1 },
    { arbitrary: fc.constant(schema.default === undefined ? undefined : { wrapped: schema.default }), weight: 1 },
  );
}
