/**
 * A spec build's input, read before anything is built: the context tar (plain or gzipped) parsed
 * entry by entry, refused with a reason when it is not a tar archive, names a path outside itself,
 * or unpacks to more than the limit; and the hash of the Dockerfile and the context's entries
 * (names, kinds, modes, link targets, bytes; not times or owners), which tags the built image, so
 * that the same input packed twice is one image.
 */
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { SPEC_IMAGE_REPOSITORY } from '../../../contracts/spec-build.js';

const BLOCK = 512;

export type ContextEntryKind = 'file' | 'directory' | 'symlink' | 'hardlink' | 'other';

export interface ContextEntry {
  /** Relative, normalised ("a/b", never "./a/b/"). */
  path: string;
  kind: ContextEntryKind;
  mode: number;
  linkTarget: string;
  content: Buffer;
}

export interface BuildContext {
  /** The archive's entries without its end marker, ready for more entries to follow. */
  archive: Buffer;
  entries: ContextEntry[];
  /** The context's own .dockerignore, if it has one. */
  dockerignore: string | null;
}

/** Why a context cannot be used; its message is what the caller is told. */
export class BuildContextError extends Error {}

/** Reads a context tar (gzip allowed); at most `maxBytes` unpacked. Throws BuildContextError saying why it cannot be used. */
export function readBuildContext(bytes: Buffer, maxBytes: number): BuildContext {
  const tar = bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzip(bytes, maxBytes) : bytes;
  if (tar.length > maxBytes) throw new BuildContextError(`the context unpacks to more than ${megabytes(maxBytes)} MB`);
  const { entries, end } = parseTar(tar);
  const byPath = new Map(entries.map((entry) => [entry.path, entry]));
  const ignore = byPath.get('.dockerignore');
  return { archive: tar.subarray(0, end), entries: [...byPath.values()], dockerignore: ignore?.kind === 'file' ? ignore.content.toString('utf8') : null };
}

/** sha256 of the Dockerfile and the context's entries (later entries of a path replace earlier ones, as on unpacking), in path order. */
export function buildHash(dockerfile: string, entries: readonly ContextEntry[]): string {
  const hash = createHash('sha256');
  const text = Buffer.from(dockerfile, 'utf8');
  hash.update(`dockerfile\0${text.length}\0`).update(text);
  for (const entry of [...entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    hash.update(`\0${entry.kind}\0${entry.path}\0${(entry.mode & 0o7777).toString(8)}\0${entry.linkTarget}\0${entry.content.length}\0`).update(entry.content);
  }
  return hash.digest('hex');
}

/** The tag of the image built from input of hash `hash`. */
export function specImageTag(hash: string): string {
  return `${SPEC_IMAGE_REPOSITORY}:${hash}`;
}

function gunzip(bytes: Buffer, maxBytes: number): Buffer {
  try {
    return gunzipSync(bytes, { maxOutputLength: maxBytes + 1 });
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw new BuildContextError(`the context unpacks to more than ${megabytes(maxBytes)} MB`);
    throw new BuildContextError(`the context is not a readable gzip stream: ${(error as Error).message}`);
  }
}

function megabytes(bytes: number): string {
  return (bytes / (1024 * 1024)).toLocaleString('en-US', { maximumFractionDigits: 1 });
}

/** Names pax and GNU headers give the entry that follows them. */
interface Pending {
  path?: string;
  linkTarget?: string;
  size?: number;
}

function parseTar(tar: Buffer): { entries: ContextEntry[]; end: number } {
  const entries: ContextEntry[] = [];
  let offset = 0;
  let pending: Pending = {};
  while (offset + BLOCK <= tar.length) {
    const header = tar.subarray(offset, offset + BLOCK);
    if (header.every((byte) => byte === 0)) return { entries, end: offset };
    checkHeader(header, offset);
    const type = String.fromCharCode(header[156]!);
    const size = pending.size ?? octal(header.subarray(124, 136), offset);
    const start = offset + BLOCK;
    if (start + size > tar.length) throw new BuildContextError(`the context tar ends inside an entry (at byte ${offset})`);
    const content = tar.subarray(start, start + size);
    offset = start + Math.ceil(size / BLOCK) * BLOCK;
    if (type === 'x') pending = { ...pending, ...paxRecords(content) };
    else if (type === 'L') pending = { ...pending, path: cString(content) };
    else if (type === 'K') pending = { ...pending, linkTarget: cString(content) };
    else if (type !== 'g') {
      const prefix = cString(header.subarray(345, 500));
      const name = pending.path ?? (prefix ? `${prefix}/${cString(header.subarray(0, 100))}` : cString(header.subarray(0, 100)));
      const path = normalise(name);
      if (path !== null) {
        entries.push({ path, kind: kindOf(type), mode: octal(header.subarray(100, 108), offset), linkTarget: pending.linkTarget ?? cString(header.subarray(157, 257)), content });
      }
      pending = {};
    }
  }
  if (offset !== tar.length) throw new BuildContextError('the context is not a tar archive (it ends inside a header)');
  return { entries, end: offset };
}

function checkHeader(header: Buffer, offset: number): void {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : header[i]!;
  const stored = Number.parseInt(cString(header.subarray(148, 156)).trim() || 'NaN', 8);
  if (stored !== sum) throw new BuildContextError(offset === 0 ? 'the context is not a tar archive' : `the context tar is damaged at byte ${offset}`);
}

function kindOf(type: string): ContextEntryKind {
  if (type === '0' || type === '\0' || type === '7') return 'file';
  if (type === '5') return 'directory';
  if (type === '2') return 'symlink';
  if (type === '1') return 'hardlink';
  return 'other';
}

/** "./a/b/" -> "a/b"; null for the root itself. A path leaving the context is refused. */
function normalise(name: string): string | null {
  const parts = name.split('/').filter((part) => part !== '' && part !== '.');
  if (name.startsWith('/') || parts.includes('..')) throw new BuildContextError(`the context names a path outside itself: ${JSON.stringify(name)}`);
  return parts.length === 0 ? null : parts.join('/');
}

function cString(bytes: Buffer): string {
  const nul = bytes.indexOf(0);
  return bytes.subarray(0, nul < 0 ? bytes.length : nul).toString('utf8');
}

/** A numeric header field: octal text, or base-256 when its first byte has the high bit set. */
function octal(field: Buffer, offset: number): number {
  if (field[0]! & 0x80) {
    let value = field[0]! & 0x7f;
    for (const byte of field.subarray(1)) value = value * 256 + byte;
    return value;
  }
  const text = cString(field).trim();
  const value = text === '' ? 0 : Number.parseInt(text, 8);
  if (!Number.isSafeInteger(value) || value < 0) throw new BuildContextError(`the context tar is damaged at byte ${offset}`);
  return value;
}

/** A pax header's `path`, `linkpath` and `size` records ("<length> <key>=<value>\n" each). */
function paxRecords(content: Buffer): Pending {
  const pending: Pending = {};
  let at = 0;
  while (at < content.length) {
    const space = content.indexOf(0x20, at);
    const length = Number.parseInt(content.subarray(at, space).toString('ascii'), 10);
    if (space < 0 || !Number.isSafeInteger(length) || length <= 0) throw new BuildContextError('the context tar has a damaged pax header');
    const record = content.subarray(space + 1, at + length - 1).toString('utf8');
    const equals = record.indexOf('=');
    const key = record.slice(0, equals);
    const value = record.slice(equals + 1);
    if (key === 'path') pending.path = value;
    else if (key === 'linkpath') pending.linkTarget = value;
    else if (key === 'size') pending.size = Number.parseInt(value, 10);
    at += length;
  }
  return pending;
}
