export { REQUEST_ID_HEADER, requestIdFrom } from './request-id.js';
export { requestLogger, writeRequestLine, type RequestLoggerOptions, type RequestLogVariables } from './request-logger.js';
export { loggedPath, UNAUTHENTICATED_PATH_CHARS } from './logged-path.js';
