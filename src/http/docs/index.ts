export { type ApiDocsOptions, DOCS_PATH, OPENAPI_PATH, openApiDocumentConfig, registerApiDocs } from './register-api-docs.js';
export {
  compareRoutesWithDocument,
  listAppRoutes,
  listDocumentedRoutes,
  NOT_API_OPERATIONS,
  type OpenAPIDocument,
  type RouteCoverage,
  toOpenApiPath,
} from './route-coverage.js';
