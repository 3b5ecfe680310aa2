import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Env } from 'hono';
import { logger } from '../../logger.js';
import { NotFoundError } from '../../errors/index.js';
import { renderDocsPage } from './docs-page.js';
import { registerErrorBodies, withStandardResponses } from './standard-responses.js';
import { locateSwaggerUi, SWAGGER_UI_FILES, swaggerUiFileReader } from './swagger-ui-assets.js';

type OpenAPIDocumentConfig = Parameters<OpenAPIHono['getOpenAPI31Document']>[0];

export interface ApiDocsOptions {
  title: string;
  version: string;
  description?: string;
  /** Document-wide security requirements, e.g. `[{ apiKey: [] }]` for a registered scheme. */
  security?: OpenAPIDocumentConfig['security'];
  /** Paths (as the document writes them) served without a key; every other needs one when `security` is set. */
  isOpen?: (path: string) => boolean;
}

export const OPENAPI_PATH = '/openapi.json';
export const DOCS_PATH = '/docs';

/** The OpenAPI 3.1 document config shared by /openapi.json and tests that read the document. */
export function openApiDocumentConfig(options: ApiDocsOptions): OpenAPIDocumentConfig {
  return {
    openapi: '3.1.0',
    info: { title: options.title, version: options.version, description: options.description },
    security: options.security,
  };
}

/**
 * GET /openapi.json: the OpenAPI 3.1 document generated from the same zod schemas that validate
 * requests, with the answers of the shared middleware added to each operation
 * (standard-responses.ts); GET /docs: an interactive reference over it, with Swagger UI served from our own
 * routes (no CDN). The document is built on each request, so routes registered after this call
 * are in it too.
 */
export function registerApiDocs<E extends Env>(app: OpenAPIHono<E>, options: ApiDocsOptions): void {
  registerErrorBodies(app);
  const isOpen = options.isOpen ?? (() => false);
  app.get(OPENAPI_PATH, (c) => c.json(withStandardResponses(app.getOpenAPI31Document(openApiDocumentConfig(options)), { isOpen })));

  const assetsDir = locateSwaggerUi();
  if (assetsDir === undefined) {
    logger.warn('swagger-ui-dist is not installed: /docs is off, /openapi.json still serves the API description');
    return;
  }
  const readAsset = swaggerUiFileReader(assetsDir);
  app.get(DOCS_PATH, (c) => c.html(renderDocsPage(options.title)));
  app.get(`${DOCS_PATH}/assets/:file`, async (c) => {
    const file = c.req.param('file');
    const contentType = SWAGGER_UI_FILES.get(file);
    if (contentType === undefined) throw new NotFoundError();
    return c.body(new Uint8Array(await readAsset(file)), 200, {
      'content-type': contentType,
      'cache-control': 'public, max-age=3600',
    });
  });
}
