export * from './domain-error.js';
export { invalidValuesFromZod } from './zod-issues.js';
