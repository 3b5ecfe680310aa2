/**
 * The MCP stdio transport, run as the agent: the SDK's own spawns as whoever we are (root in a
 * sandbox), and a server named in a conversation's settings is code the agent chose. The server
 * runs in a process group of its own, so that closing ends what it started too (`npx` starts a
 * second node), and the end of its stderr is kept to say why it failed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { spawnAsAgent, type AgentUser } from '../../../agent-user.js';

export interface StdioServerOptions {
  command: string;
  args: string[];
  /** Added to the few variables every server gets (PATH, HOME, ...), as the SDK does. */
  env: Record<string, string>;
  cwd: string;
  agentUser?: AgentUser;
}

/** How much of the server's stderr is kept for error messages. */
const STDERR_TAIL_BYTES = 2000;
/** How long a server has to exit after its stdin closes, and then after SIGTERM. */
const EXIT_GRACE_MS = 1000;

export class AgentStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private readonly buffer = new ReadBuffer();
  private stderr = '';

  constructor(private readonly options: StdioServerOptions) {}

  /** The end of what the server wrote to stderr, for error messages. */
  stderrTail(): string {
    return this.stderr.trim();
  }

  start(): Promise<void> {
    if (this.child) throw new Error('The stdio transport is already started');
    const { command, args, env, cwd, agentUser } = this.options;
    const child = spawn(command, args, {
      ...spawnAsAgent(agentUser, { ...getDefaultEnvironment(), ...env }),
      cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    this.child = child;
    this.exited = new Promise((resolve) => child.once('close', () => resolve()));
    child.stdout?.on('data', (chunk: Buffer) => {
      this.buffer.append(chunk);
      this.readMessages();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES);
    });
    child.stdin?.on('error', (error) => this.onerror?.(error));
    child.once('close', () => {
      if (this.child === child) this.child = undefined;
      this.onclose?.();
    });
    return new Promise((resolve, reject) => {
      child.once('spawn', () => resolve());
      child.once('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed) return Promise.reject(new Error('The MCP server is not running'));
    return new Promise((resolve, reject) => {
      stdin.write(serializeMessage(message), (error) => (error ? reject(error) : resolve()));
    });
  }

  /** Closes stdin, then ends the server's process group: SIGTERM if it lingers, SIGKILL for what is left. */
  async close(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    this.buffer.clear();
    if (!child) return;
    child.stdin?.end();
    if (!(await this.exitsWithin(EXIT_GRACE_MS))) {
      killGroup(child, 'SIGTERM');
      await this.exitsWithin(EXIT_GRACE_MS);
    }
    // Whatever the server started and left behind goes with it.
    killGroup(child, 'SIGKILL');
    await this.exited;
  }

  private async exitsWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    const exited = await Promise.race([this.exited.then(() => true), timeout]);
    clearTimeout(timer);
    return exited;
  }

  private readMessages(): void {
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.buffer.readMessage();
      } catch (error) {
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    // The group is gone already.
  }
}
