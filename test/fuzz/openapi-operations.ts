/**
 * The operations of an OpenAPI 3.1 document, as the fuzz suite walks them: discovered from the
 * served /openapi.json, never listed by hand, so routes added later are fuzzed without a change here.
 */

/** The subset of JSON Schema our documents use, with `$ref`s resolved on demand. */
export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  default?: unknown;
}

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  schema: JsonSchema;
}

export interface Operation {
  method: string;
  /** The path template, e.g. /api/v1/sandboxes/{id}. */
  path: string;
  parameters: Parameter[];
  /** Media type and schema of the request body, when the operation declares one. */
  body?: { mediaType: string; schema: JsonSchema };
}

interface OpenApiDocument {
  paths: Record<string, Record<string, { parameters?: Parameter[]; requestBody?: { content?: Record<string, { schema?: JsonSchema }> } }>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);

export function operationsOf(document: unknown): Operation[] {
  const doc = document as OpenApiDocument;
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!METHODS.has(method)) continue;
      const [mediaType, content] = Object.entries(operation.requestBody?.content ?? {})[0] ?? [];
      operations.push({
        method: method.toUpperCase(),
        path,
        parameters: (operation.parameters ?? []).map((p) => ({ ...p, required: p.required ?? p.in === 'path', schema: p.schema ?? {} })),
        ...(mediaType !== undefined && { body: { mediaType, schema: content?.schema ?? {} } }),
      });
    }
  }
  return operations;
}

/** Follows `$ref: #/components/schemas/X` (one level at a time, as generation descends). */
export function resolveSchema(document: unknown, schema: JsonSchema): JsonSchema {
  let current = schema;
  for (let hops = 0; current.$ref !== undefined && hops < 32; hops++) {
    const name = current.$ref.replace('#/components/schemas/', '');
    current = (document as OpenApiDocument).components?.schemas?.[name] ?? {};
  }
  return current;
}
