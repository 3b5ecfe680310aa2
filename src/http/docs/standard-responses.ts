import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Env } from 'hono';
import { ErrorDetailSchema, ValidationErrorSchema } from '../error-bodies.js';

export type OpenAPIDocument = ReturnType<OpenAPIHono['getOpenAPI31Document']>;
type Operation = NonNullable<NonNullable<OpenAPIDocument['paths']>[string]['get']>;

const OPERATION_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;
/** Methods whose requests carry a body, which the body limit may refuse whatever the route reads. */
const BODY_METHODS = new Set(['post', 'put', 'patch']);

export interface StandardResponsesOptions {
  /** Whether a request to this path (as the document writes it) needs a key, when keys are on. */
  isOpen(path: string): boolean;
}

/** The components the added responses point at, registered on the app so the document holds them. */
export function registerErrorBodies<E extends Env>(app: OpenAPIHono<E>): void {
  app.openAPIRegistry.register('ErrorDetail', ErrorDetailSchema);
  app.openAPIRegistry.register('HTTPValidationError', ValidationErrorSchema);
}

/**
 * Adds to every operation the answers the shared middleware gives, which no route's own definition
 * states: 401 where a key is needed (the document says a security requirement; an open path says it
 * needs none), 413 where a body may be sent (the body limit), 422 where a body or a parameter is
 * validated. An answer a route already describes is kept.
 */
export function withStandardResponses(document: OpenAPIDocument, options: StandardResponsesOptions): OpenAPIDocument {
  const keysOn = (document.security ?? []).length > 0;
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of OPERATION_METHODS) {
      const operation = item[method];
      if (!operation) continue;
      if (keysOn && options.isOpen(path)) operation.security = [];
      else if (keysOn) addResponse(operation, '401', 'Missing or invalid key', 'ErrorDetail');
      if (operation.requestBody || BODY_METHODS.has(method)) addResponse(operation, '413', 'Request body too large', 'ErrorDetail');
      if (operation.requestBody || (operation.parameters ?? []).length > 0) addResponse(operation, '422', 'Validation error', 'HTTPValidationError');
    }
  }
  return document;
}

function addResponse(operation: Operation, status: string, description: string, schema: string): void {
  operation.responses ??= {};
  operation.responses[status] ??= { description, content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } } };
}
