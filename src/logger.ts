import { pino } from 'pino';

/** One JSON line per event. LOG_LEVEL=silent quiets it (the test runner does). */
export const logger = pino({
  level: process.env.LOG_LEVEL ?? 'info',
  base: { service: process.env.SERVICE_NAME },
  redact: {
    paths: ['*.api_key', '*.session_api_key', '*.authorization', 'req.headers.authorization', 'req.headers["x-session-api-key"]'],
    censor: '[redacted]',
  },
});
export type Logger = typeof logger;
