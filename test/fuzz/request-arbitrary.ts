/**
 * One generated HTTP request for an operation: path and query parameters and a body from the
 * operation's schemas (see ./schema-arbitrary), plus whole-request mutations no schema describes:
 * malformed percent-encoding, unknown and repeated parameters, bodies that are not JSON, are nested
 * thousands deep, or are megabytes long, and bodies sent to routes that take none.
 */
import fc from 'fast-check';
import type { Operation } from './openapi-operations.js';
import { DeepJson, hostileString, jsonText, schemaValue, type SchemaContext } from './schema-arbitrary.js';

export interface FuzzRequest {
  method: string;
  /** Path and query, percent-encoded. */
  url: string;
  headers: Record<string, string>;
  body?: string | FormData;
  /** The operation it was generated for, e.g. "POST /api/conversations". */
  operation: string;
}

const RAW_SEGMENTS = ['%00', '%ZZ', '%', '..', '%2e%2e', '%2F', 'a%00b', '%ED%A0%80', 'x'.repeat(300)];

export function requestArbitrary(ctx: SchemaContext, operation: Operation): fc.Arbitrary<FuzzRequest> {
  const pathParams = operation.parameters.filter((p) => p.in === 'path');
  const queryParams = operation.parameters.filter((p) => p.in === 'query');
  const path = fc
    .tuple(...pathParams.map((p) => fc.oneof({ arbitrary: schemaValue(ctx, p.schema, p.name).map(pathSegment), weight: 10 }, { arbitrary: fc.constantFrom(...RAW_SEGMENTS), weight: 1 })))
    .map((values) => pathParams.reduce((url, p, i) => url.replace(`{${p.name}}`, values[i]!), operation.path));
  const query = fc
    .tuple(
      ...queryParams.map((p) =>
        (p.required ? fc.constant(true) : fc.boolean()).chain((present): fc.Arbitrary<[string, string][]> => (present ? schemaValue(ctx, p.schema, p.name).map((v) => queryPairs(p.name, v)) : fc.constant([]))),
      ),
      fc.oneof(
        { arbitrary: fc.constant<[string, string][]>([]), weight: 8 },
        { arbitrary: fc.tuple(fc.string({ maxLength: 8 }), hostileString).map((pair): [string, string][] => [pair]), weight: 1 },
      ),
    )
    .map((lists) => lists.flat() as [string, string][]);
  return fc.tuple(path, query, bodyArbitrary(ctx, operation)).map(([url, pairs, body]): FuzzRequest => {
    const search = pairs.map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`).join('&');
    return {
      method: operation.method,
      url: search === '' ? url : `${url}?${search}`,
      headers: body.contentType === undefined ? {} : ({ 'content-type': body.contentType } as Record<string, string>),
      ...(body.body !== undefined && { body: body.body }),
      operation: `${operation.method} ${operation.path}`,
    };
  });
}

function pathSegment(value: unknown): string {
  return percentEncode(scalarText(value));
}

/** encodeURIComponent, except that a lone surrogate becomes the (invalid UTF-8) bytes of one. */
function percentEncode(text: string): string {
  return [...text].map((char) => (/[\ud800-\udfff]/.test(char) ? '%ED%A0%80' : encodeURIComponent(char))).join('');
}

/** A query value as a client would send it: arrays repeat the parameter, anything else is its text. */
function queryPairs(name: string, value: unknown): [string, string][] {
  if (value === undefined) return [];
  if (Array.isArray(value)) return value.map((item) => [name, scalarText(item)]);
  return [[name, scalarText(value)]];
}

function scalarText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || typeof value !== 'object') return String(value);
  return jsonText(value);
}

interface GeneratedBody {
  contentType?: string;
  body?: string | FormData;
}

function bodyArbitrary(ctx: SchemaContext, operation: Operation): fc.Arbitrary<GeneratedBody> {
  const declared = operation.body;
  const takesBody = operation.method !== 'GET' && operation.method !== 'DELETE';
  const raw = rawBodies();
  if (!declared) {
    if (!takesBody) return fc.constant({});
    return fc.oneof({ arbitrary: fc.constant({}), weight: 4 }, { arbitrary: raw, weight: 1 }, { arbitrary: fc.jsonValue({ maxDepth: 3 }).map(jsonBody), weight: 1 });
  }
  if (declared.mediaType === 'multipart/form-data') {
    return fc.oneof({ arbitrary: multipartBody(), weight: 6 }, { arbitrary: raw, weight: 1 });
  }
  const valid = schemaValue(ctx, declared.schema).map((value) => ({ contentType: declared.mediaType, body: serialize(declared.mediaType, value) }));
  return fc.oneof({ arbitrary: valid, weight: 10 }, { arbitrary: raw, weight: 1 });
}

function jsonBody(value: unknown): GeneratedBody {
  return { contentType: 'application/json', body: jsonText(value) };
}

/** NDJSON media types get one record per line (arrays are split); anything else is JSON. */
function serialize(mediaType: string, value: unknown): string {
  if (/ndjson/.test(mediaType) && Array.isArray(value)) return value.map((item) => jsonText(item)).join('\n');
  return jsonText(value);
}

/** Bodies no schema produces: broken JSON, deep nesting as text, megabytes, the wrong media type. */
function rawBodies(): fc.Arbitrary<GeneratedBody> {
  return fc.oneof(
    fc.constantFrom('', '{', '[', 'null', '"\u0000"', '{"a":1}{"b":2}', '\ufeff{}', '[1,]', '{"__proto__":{"polluted":true}}').map((body) => ({ contentType: 'application/json', body })),
    fc.integer({ min: 2000, max: 20_000 }).map((n) => ({ contentType: 'application/json', body: `${'['.repeat(n)}${']'.repeat(n)}` })),
    fc.integer({ min: 1000, max: 5000 }).map((n) => jsonBody({ value: new DeepJson(n, 'object') })),
    fc.constantFrom(1, 3).map((mb) => jsonBody({ data: 'x'.repeat(mb * 1024 * 1024) })),
    fc.string({ maxLength: 64 }).map((body) => ({ contentType: 'text/plain', body })),
    fc.string({ maxLength: 64 }).map((body) => ({ body })),
  );
}

function multipartBody(): fc.Arbitrary<GeneratedBody> {
  return fc.oneof(
    fc.tuple(fc.uint8Array({ maxLength: 256 }), fc.string({ maxLength: 40 })).map(([bytes, name]) => {
      const form = new FormData();
      form.append('file', new Blob([bytes]), name || 'f');
      return { body: form };
    }),
    fc.string({ maxLength: 40 }).map((text) => {
      const form = new FormData();
      form.append('file', text);
      return { body: form };
    }),
    fc.constant({ body: new FormData() }),
  );
}
