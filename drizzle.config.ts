import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './src/sandbox-server/db/schema.ts',
  out: './drizzle',
});
