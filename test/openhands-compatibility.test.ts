/**
 * docs/openhands-compatibility.md must account for every route of OpenHands' agent-server, as the
 * OpenAPI types shipped with the published client describe them: a table row naming the path (in
 * backticks) and the method. A new client version with new routes fails this until they are listed.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);

async function peerAgentServerRoutes(): Promise<string[]> {
  // The package exports only its entry points; its generated types sit beside the main one.
  const distDir = dirname(require.resolve('@openhands/typescript-client'));
  const types = await readFile(join(distDir, 'generated/agent-server-schema.d.ts'), 'utf8');
  const operation = /export type \w+?(Get|Post|Delete|Patch|Put)Data = \{[\s\S]*?url: '([^']+)';/g;
  return [...types.matchAll(operation)].map((match) => `${match[1]!.toUpperCase()} ${match[2]}`);
}

describe('docs/openhands-compatibility.md', () => {
  it('accounts for every route of OpenHands’ agent-server', async () => {
    const doc = await readFile(new URL('../docs/openhands-compatibility.md', import.meta.url), 'utf8');
    const rows = doc.split('\n').filter((line) => line.startsWith('|'));
    const routes = await peerAgentServerRoutes();
    expect(routes.length).toBeGreaterThan(100);
    const unaccounted = routes.filter((route) => {
      const [method, path] = route.split(' ') as [string, string];
      return !rows.some((row) => row.includes(`\`${path}\``) && row.includes(method));
    });
    expect(unaccounted).toEqual([]);
  });

  it('is linked from the README', async () => {
    const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    expect(readme).toContain('(docs/openhands-compatibility.md)');
  });
});
