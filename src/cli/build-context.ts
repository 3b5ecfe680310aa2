/**
 * A directory packed as a spec build's context, as `docker build` packs it: every file and
 * directory under it but those its .dockerignore excludes, in a tar made by the system's tar
 * (modes, links and long names as tar keeps them).
 */
import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { CliError } from './cli-error.js';

interface IgnoreRule {
  pattern: RegExp;
  negated: boolean;
}

/** One pattern of a .dockerignore as Docker reads it: `**` any depth, `*` and `?` within a name, `[...]` a class, `\` an escape. */
function patternRegExp(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!;
    if (char === '*' && pattern[i + 1] === '*') {
      i++;
      if (pattern[i + 1] === '/') {
        i++;
        source += '(?:.*/)?';
      } else source += '.*';
    } else if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else if (char === '\\' && i + 1 < pattern.length) source += `\\${pattern[++i]}`;
    else if (char === '[') {
      const end = pattern.indexOf(']', i + 1);
      if (end < 0) source += '\\[';
      else {
        source += `[${pattern.slice(i + 1, end).replace(/^!/, '^')}]`;
        i = end;
      }
    } else source += char.replace(/[.+^${}()|/\]]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/** The rules of a .dockerignore's text: one pattern a line, `#` comments, `!` re-including what an earlier line excluded. */
export function dockerignoreRules(text: string): IgnoreRule[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const negated = line.startsWith('!');
      const cleaned = (negated ? line.slice(1).trim() : line)
        .split('/')
        .filter((part) => part !== '' && part !== '.')
        .join('/');
      return { pattern: patternRegExp(cleaned), negated };
    });
}

/** Whether `path` (relative, "/"-separated) is left out: the last rule matching it or a directory above it decides. */
export function isIgnored(rules: readonly IgnoreRule[], path: string): boolean {
  const parts = path.split('/');
  const prefixes = parts.map((_, index) => parts.slice(0, index + 1).join('/'));
  let ignored = false;
  for (const rule of rules) if (prefixes.some((prefix) => rule.pattern.test(prefix))) ignored = !rule.negated;
  return ignored;
}

/** The context of `dir` as a tar: what its .dockerignore leaves in, in path order. */
export async function packBuildContext(dir: string): Promise<Buffer> {
  const ignore = await readFile(join(dir, '.dockerignore'), 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return '';
    throw new CliError(`cannot read ${join(dir, '.dockerignore')}: ${error.message}`);
  });
  const rules = dockerignoreRules(ignore);
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    throw new CliError(`cannot read the context directory ${dir}: ${error.message}`);
  });
  const paths = entries
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .filter((path) => !isIgnored(rules, path))
    .sort();
  return runTar(dir, paths);
}

function runTar(dir: string, paths: readonly string[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const tar = spawn('tar', ['-c', '-f', '-', '-C', dir, '--no-recursion', '--null', '-T', '-'], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    tar.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    tar.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    tar.on('error', (error) => reject(new CliError(`packing the context needs tar: ${error.message}`)));
    tar.on('close', (code) => {
      if (code === 0) resolve(Buffer.concat(out));
      else reject(new CliError(`packing the context ${dir} failed: ${Buffer.concat(err).toString('utf8').trim() || `tar exited ${code}`}`));
    });
    tar.stdin.end(paths.map((path) => `./${path}\0`).join(''));
  });
}
