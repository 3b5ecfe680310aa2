export { bodyLimit, type BodyLimitOptions } from './body-limit.js';
export { jsonDepthLimit, jsonTooDeepError } from './json-depth.js';
export { rejectNulBytes } from './reject-nul-bytes.js';
