import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES } from '../src/sandbox-server/config.js';

describe('README', () => {
  it('opens with the two quick-start commands: run the service, run the tests', async () => {
    const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    const quickStart = readme.slice(readme.indexOf('## Quick start'));
    const commands = /```sh\n([\s\S]*?)```/.exec(quickStart)?.[1]?.trim().split('\n') ?? [];
    expect(commands.map((line) => line.replace(/\s+#.*$/, ''))).toEqual(['npm ci && npm run build && npx sandbox-server', 'npm test']);
  });

  it('documents every setting of the control plane', async () => {
    const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    for (const name of Object.keys(CONFIG_VARIABLES)) expect(readme).toContain(`| \`${name}\` |`);
  });
});
