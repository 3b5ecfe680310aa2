import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';

interface Stage {
  name: string;
  from: string;
  lines: string[];
}

/** The Dockerfile's stages in order, each with its instructions (continuation lines joined). */
function stagesOf(dockerfile: string): Stage[] {
  const instructions = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const stages: Stage[] = [];
  for (const line of instructions) {
    const from = /^FROM\s+(\S+)\s+AS\s+(\S+)$/i.exec(line);
    if (from) stages.push({ name: from[2]!, from: from[1]!, lines: [] });
    else stages.at(-1)?.lines.push(line);
  }
  return stages;
}

/** The stages a target is made of: itself, the stages it is FROM, and those it copies from. */
function closure(stages: Stage[], target: string): Stage[] {
  const byName = new Map(stages.map((stage) => [stage.name, stage]));
  const seen = new Map<string, Stage>();
  const visit = (name: string) => {
    const stage = byName.get(name);
    if (!stage || seen.has(name)) return;
    seen.set(name, stage);
    visit(stage.from);
    for (const line of stage.lines) {
      const copyFrom = /^COPY\s+--from=(\S+)/i.exec(line);
      if (copyFrom) visit(copyFrom[1]!);
    }
  };
  visit(target);
  return [...seen.values()];
}

const needsNetwork = (stage: Stage) => stage.lines.some((line) => /^RUN\b.*\bnpm (ci|install)\b/.test(line));
const copiesHostBuild = (stage: Stage) => stage.lines.some((line) => /^COPY\s+(?!--from)(.*\s)?(dist|node_modules)\//.test(line));

/**
 * The build shapes compose.yaml and CI rely on, which no build here can show whole: docker builds
 * on this machine have no network, so the default target (npm ci inside) is not built by the suite.
 */
describe('the Dockerfile and compose.yaml', async () => {
  const stages = stagesOf(await readFile(new URL('../Dockerfile', import.meta.url), 'utf8'));
  const compose = await readFile(new URL('../compose.yaml', import.meta.url), 'utf8');
  const names = stages.map((stage) => stage.name);

  it('builds the control plane compose builds from source, needing nothing of a host build', () => {
    const target = /target:\s*\$\{SANDBOX_SERVER_TARGET:-([\w-]+)\}/.exec(compose)?.[1];
    expect(target).toBe('sandbox-server');
    // The last stage is what a plain `docker build .` makes.
    expect(names.at(-1)).toBe(target);
    const made = closure(stages, target!);
    expect(made.filter(copiesHostBuild).map((stage) => stage.name)).toEqual([]);
    expect(made.some(needsNetwork)).toBe(true);
  });

  it('keeps the offline targets before any stage that needs the network, for the classic builder', () => {
    const firstNetworked = stages.findIndex(needsNetwork);
    expect(firstNetworked).toBeGreaterThan(0);
    for (const offline of ['agent-server', 'sandbox-server-from-host']) {
      expect(names.indexOf(offline)).toBeGreaterThanOrEqual(0);
      expect(names.indexOf(offline)).toBeLessThan(firstNetworked);
    }
  });

  it('requires an API key', () => {
    expect(compose).toMatch(/SANDBOX_SERVER_API_KEYS: \$\{SANDBOX_SERVER_API_KEYS:\?[^}]+\}/);
  });
});
