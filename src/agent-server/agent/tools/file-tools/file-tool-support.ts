/** What the gemini-style file tools share: their options, limits, paths, and file errors told to the agent. */
import type { Stats } from 'node:fs';
import path from 'node:path';
import { type AgentFs, isErrno, NOT_REGULAR } from '../../../agent-fs/index.js';

export interface FileToolOptions {
  /** Relative paths are taken from here. */
  workspaceDir: string;
  /** Every read and write, with the agent user's rights. */
  files: AgentFs;
}

/** Larger files are refused: they do not fit an LLM's context anyway. */
export const MAX_TEXT_FILE_BYTES = 10 * 1024 * 1024;

export function workspaceNote(workspaceDir: string): string {
  return `Your working directory is ${workspaceDir}; paths may be absolute or relative to it.`;
}

/** The absolute path the agent means: a relative one is taken from the workspace. */
export function agentPath(workspaceDir: string, requested: string): string {
  return path.resolve(workspaceDir, requested);
}

/** stat with links followed, or null when nothing is there. */
export function statOrNull(files: AgentFs, file: string): Promise<Stats | null> {
  return files.stat(file).catch((error: unknown) => {
    if (isErrno(error, 'ENOENT', 'ENOTDIR')) return null;
    throw error;
  });
}

/** An error of a file operation as the agent should read it; anything but a file system error is a bug and rethrown. */
export function describeFileError(error: unknown, file: string): string {
  if (!isErrno(error)) throw error;
  switch (error.code) {
    case 'EACCES':
    case 'EPERM':
      return `Permission denied: ${file}`;
    case 'ENOENT':
    case 'ENOTDIR':
      return `No such file or directory: ${file}`;
    case 'EISDIR':
      return `Path is a directory, not a file: ${file}`;
    case 'ELOOP':
      return `Too many symbolic links: ${file}`;
    case 'EFBIG':
      return `The file ${file} is too large (more than ${MAX_TEXT_FILE_BYTES} bytes); search it with grep or read parts with the terminal instead.`;
    case NOT_REGULAR:
      return `Not a regular file: ${file}`;
    default:
      return `${error.code}: ${error.message}`;
  }
}
