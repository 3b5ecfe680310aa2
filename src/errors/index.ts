export * from './domain-error.js';
export { validationItemsFromZod } from './zod-issues.js';
