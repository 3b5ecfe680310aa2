export { type ApiDocsOptions, DOCS_PATH, OPENAPI_PATH, openApiDocumentConfig, registerApiDocs } from './register-api-docs.js';
