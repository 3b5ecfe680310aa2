import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../src');

interface Import {
  /** The importing file, relative to src/ (`sandbox-server/app.ts`). */
  from: string;
  /** The imported file relative to src/ (`contracts/paging.ts`), or the package as named (`drizzle-orm`). */
  to: string;
  isFile: boolean;
  /** `import type` or `export type`, or every name imported marked `type`: gone once compiled. */
  typeOnly: boolean;
}

/** `./x.js` as the file it names: x.ts, or x/index.ts for a folder. */
function resolveFile(importer: string, specifier: string): string {
  const target = resolve(dirname(importer), specifier);
  const candidates = [target.replace(/\.js$/, '.ts'), `${target}.ts`, join(target, 'index.ts')];
  return relative(SRC, candidates.find((candidate) => existsSync(candidate)) ?? target);
}

function isTypeOnly(node: ts.ImportDeclaration | ts.ExportDeclaration): boolean {
  if (ts.isExportDeclaration(node)) return node.isTypeOnly;
  const clause = node.importClause;
  if (!clause) return false;
  if (clause.isTypeOnly) return true;
  const bindings = clause.namedBindings;
  return clause.name === undefined && bindings !== undefined && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((element) => element.isTypeOnly);
}

/** Every import of src/, read from the syntax tree: static imports, re-exports and `import()`. */
async function readImports(): Promise<Import[]> {
  const found: Import[] = [];
  for (const entry of await readdir(SRC, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const file = join(entry.parentPath, entry.name);
    const source = ts.createSourceFile(file, await readFile(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const add = (specifier: string, typeOnly: boolean) => {
      const isFile = specifier.startsWith('.');
      found.push({ from: relative(SRC, file), to: isFile ? resolveFile(file, specifier) : specifier, isFile, typeOnly });
    };
    const visit = (node: ts.Node): void => {
      if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
        add(node.moduleSpecifier.text, isTypeOnly(node));
      } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0])) {
        add(node.arguments[0].text, false);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/** `contracts` for `contracts/paging.ts`, `logger.ts` for a file at the top of src/. */
const topOf = (path: string) => path.split('/')[0]!;

/** The control plane's room of a file: `services` for `sandbox-server/services/...`, `app.ts` for its top-level files. */
const roomOf = (path: string) => (path.startsWith('sandbox-server/') ? path.split('/')[1]! : null);

/** Imports from files in `rooms` of the control plane into its `forbidden` rooms. */
function crossings(all: readonly Import[], rooms: readonly string[], forbidden: readonly string[]): string[] {
  return all
    .filter(({ from, to, isFile }) => isFile && rooms.includes(roomOf(from) ?? '') && forbidden.includes(roomOf(to) ?? ''))
    .map(({ from, to }) => `${from} -> ${to}`);
}

/** Every cycle among src/'s files (a strongly connected set of more than one, or a file importing itself), type imports included. */
function fileCycles(all: readonly Import[]): string[][] {
  const edges = new Map<string, string[]>();
  for (const { from, to, isFile } of all) if (isFile) edges.set(from, [...(edges.get(from) ?? []), to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  // Tarjan's algorithm, iterative so that a long import chain cannot overflow the call stack.
  for (const root of edges.keys()) {
    if (index.has(root)) continue;
    const work: { file: string; next: number }[] = [{ file: root, next: 0 }];
    index.set(root, index.size);
    low.set(root, index.get(root)!);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const targets = edges.get(frame.file) ?? [];
      if (frame.next < targets.length) {
        const target = targets[frame.next++]!;
        if (!index.has(target)) {
          index.set(target, index.size);
          low.set(target, index.get(target)!);
          stack.push(target);
          onStack.add(target);
          work.push({ file: target, next: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.file, Math.min(low.get(frame.file)!, index.get(target)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.file, Math.min(low.get(parent.file)!, low.get(frame.file)!));
      if (low.get(frame.file) !== index.get(frame.file)) continue;
      const members: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        members.push(member);
      } while (member !== frame.file);
      if (members.length > 1 || targets.includes(frame.file)) cycles.push(members.sort());
    }
  }
  return cycles.sort((one, other) => one[0]!.localeCompare(other[0]!));
}

/** The import rules of docs/architecture.md, checked on the source so that a new file cannot break them unseen. */
describe('layers', () => {
  let imports: Import[];
  beforeAll(async () => {
    imports = await readImports();
  });

  it('finds the imports it checks', () => {
    // A reader that found nothing would pass every rule below.
    expect(imports.filter(({ from }) => from === 'sandbox-server/reconciler/loop.ts').length).toBeGreaterThan(5);
    expect(imports).toContainEqual({ from: 'sandbox-server/main.ts', to: 'sandbox-server/image/index.ts', isFile: true, typeOnly: false });
  });

  it('finds no cycle among the files of src/', () => {
    expect(fileCycles(imports)).toEqual([]);
  });

  it('finds a cycle when there is one', () => {
    const edge = (from: string, to: string): Import => ({ from, to, isFile: true, typeOnly: true });
    expect(fileCycles([edge('a.ts', 'b.ts'), edge('b.ts', 'c.ts'), edge('c.ts', 'a.ts'), edge('c.ts', 'd.ts'), edge('d.ts', 'd.ts')])).toEqual([['a.ts', 'b.ts', 'c.ts'], ['d.ts']]);
  });

  it('keeps contracts, events and errors free of HTTP, of both servers and of anything else in src/', () => {
    const shared = new Set(['contracts', 'events', 'errors']);
    expect(imports.filter(({ from, to, isFile }) => shared.has(topOf(from)) && isFile && !shared.has(topOf(to)))).toEqual([]);
  });

  it('keeps the shared HTTP pieces free of both servers', () => {
    expect(imports.filter(({ from, to, isFile }) => topOf(from) === 'http' && isFile && /^(agent|sandbox)-server$/.test(topOf(to)))).toEqual([]);
  });

  it('keeps the two servers apart', () => {
    const crossing = imports.filter(({ from, to, isFile }) => {
      const servers = new Set([topOf(from), topOf(to)]);
      return isFile && servers.size === 2 && servers.has('agent-server') && servers.has('sandbox-server');
    });
    expect(crossing).toEqual([]);
  });

  it('lets the client and sandboxctl use the contracts, the events and http/send, and only types of the models and http/errors', () => {
    const allowed = (to: string, typeOnly: boolean) =>
      ['client', 'cli', 'contracts', 'events'].includes(topOf(to)) ||
      to === 'http/send.ts' ||
      (typeOnly && (to.startsWith('sandbox-server/models/') || to === 'http/errors.ts'));
    const crossing = imports.filter(({ from, to, isFile, typeOnly }) => ['client', 'cli'].includes(topOf(from)) && isFile && !allowed(to, typeOnly));
    expect(crossing).toEqual([]);
  });

  it('keeps the control plane routes off the database, the engine and the reconciler: they call services', () => {
    const packages = imports.filter(({ from, to, isFile }) => roomOf(from) === 'routes' && !isFile && /^(drizzle-orm|dockerode|postgres)\b/.test(to));
    expect(packages).toEqual([]);
    expect(crossings(imports, ['routes'], ['db', 'runtime', 'reconciler', 'engines', 'warm-pool', 'components'])).toEqual([]);
  });

  it('keeps services off the reconciler, the engines, the proxy and the routes', () => {
    expect(crossings(imports, ['services'], ['reconciler', 'engines', 'proxy', 'routes', 'warm-pool', 'components', 'app.ts', 'server.ts'])).toEqual([]);
  });

  it('keeps the reconciler off services, the proxy, the engines and the routes', () => {
    expect(crossings(imports, ['reconciler'], ['services', 'proxy', 'engines', 'routes', 'warm-pool', 'components', 'app.ts', 'server.ts'])).toEqual([]);
  });

  it('keeps the proxy off services, the reconciler and the database: the route resolves its target', () => {
    expect(crossings(imports, ['proxy'], ['services', 'reconciler', 'db', 'engines', 'routes', 'warm-pool', 'components', 'app.ts', 'server.ts'])).toEqual([]);
  });

  it('keeps the LLM relay off services, routes, the reconciler, the proxy and the runtime', () => {
    expect(crossings(imports, ['llm-relay'], ['services', 'routes', 'reconciler', 'proxy', 'runtime', 'engines', 'warm-pool', 'components', 'app.ts', 'server.ts'])).toEqual([]);
  });

  it('lets nothing but main, server.ts and its components import what builds and starts the control plane', () => {
    const importers = imports.filter(({ from, to, isFile }) => isFile && ['sandbox-server/app.ts', 'sandbox-server/server.ts', 'sandbox-server/main.ts'].includes(to) && !['sandbox-server/main.ts', 'sandbox-server/server.ts'].includes(from) && roomOf(from) !== 'components');
    expect(importers).toEqual([]);
  });

  it('keeps the runtime off the database and everything above it', () => {
    const packages = imports.filter(({ from, to, isFile }) => roomOf(from) === 'runtime' && !isFile && /^(drizzle-orm|postgres)\b/.test(to));
    expect(packages).toEqual([]);
    const above = imports.filter(({ from, to, isFile }) => roomOf(from) === 'runtime' && isFile && topOf(to) === 'sandbox-server' && !['runtime', 'net'].includes(roomOf(to)!));
    expect(above.map(({ from, to }) => `${from} -> ${to}`)).toEqual([]);
  });

  it("keeps the control plane's floors (db, net, runtime, models, lifecycle-events, agent-client.ts) to each other", () => {
    const floors = ['db', 'net', 'runtime', 'models', 'lifecycle-events', 'agent-client.ts'];
    const above = imports.filter(({ from, to, isFile }) => floors.includes(roomOf(from) ?? '') && isFile && topOf(to) === 'sandbox-server' && !floors.includes(roomOf(to)!));
    expect(above.map(({ from, to }) => `${from} -> ${to}`)).toEqual([]);
  });
});
