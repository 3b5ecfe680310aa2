import { execFile } from 'node:child_process';

/** Runs a program with `input` on its standard input; resolves to its stdout, rejects when it fails, with its stderr. */
export type RunCommand = (file: string, args: string[], input?: string) => Promise<unknown>;

export const runCommand: RunCommand = (file, args, input) =>
  new Promise((resolve, reject) => {
    const child = execFile(file, args, { maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => (error ? reject(Object.assign(error, { stderr })) : resolve(stdout)));
    // A program that exits without reading (a failing iptables) closes the pipe: its exit code says why.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input);
  });
