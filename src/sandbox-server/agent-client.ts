import { Readable } from 'node:stream';
import { z } from 'zod';
import { type ConversationInfo, ConversationInfoSchema } from '../contracts/agent-server/conversation-info.js';
import type { StartConversationRequestSchema } from '../contracts/agent-server/conversation-requests.js';
import { type ServerInfo, ServerInfoSchema } from '../contracts/agent-server/server-info.js';
import { SESSION_KEY_HEADER, SESSION_KEY_HEADER_LOWER } from '../contracts/agent-server/session-key.js';
import { AGENT_SERVER_PORT_NAME } from '../contracts/sandbox.js';
import { UpstreamError } from '../errors/index.js';
import { type BashOutput, BashOutputSchema, DEFAULT_TIMEOUT_SECONDS as DEFAULT_BASH_TIMEOUT_SECONDS, type ExecuteBashRequest } from '../contracts/agent-server/bash.js';
import type { SandboxRow } from './db/schema.js';

/**
 * Where a sandbox's agent-server answers, and the key it expects. The proxy's hops use `host` and
 * `port` as they are, so that no request parses `baseUrl`: the target is built once, when its
 * sandbox is read, and the proxy keeps it in memory from then on.
 */
export interface AgentServerTarget {
  host: string;
  port: number;
  baseUrl: string;
  sessionApiKey: string;
}

export function agentServerTarget(host: string, port: number, sessionApiKey: string): AgentServerTarget {
  return { host, port, baseUrl: `http://${host}:${port}`, sessionApiKey };
}

/** The agent-server of a RUNNING sandbox, or null when it has none to talk to yet. */
export function agentTargetOf(row: SandboxRow): AgentServerTarget | null {
  return row.status === 'RUNNING' ? publishedTargetOf(row) : null;
}

/**
 * The agent-server of a sandbox still STARTING (and wanted RUNNING) whose container is up with its
 * port published, or null: it may answer before the reconciler has seen it answer.
 */
export function startingAgentTargetOf(row: SandboxRow): AgentServerTarget | null {
  return row.status === 'STARTING' && row.desiredState === 'RUNNING' ? publishedTargetOf(row) : null;
}

/** Where the sandbox's container publishes its agent-server, whatever its status; null when it does not. */
function publishedTargetOf(row: SandboxRow): AgentServerTarget | null {
  const port = row.hostPorts?.[AGENT_SERVER_PORT_NAME];
  if (port === undefined || row.hostAddress === null) return null;
  return agentServerTarget(row.hostAddress, port, row.sessionApiKey);
}

const ALIVE_TIMEOUT_MS = 1_000;

/** GET <url>/alive on an agent-server; any answer but 2xx, or none in time, is "not yet". */
export async function checkAgentServerAlive(url: string, sessionApiKey: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/alive`, {
      headers: { [SESSION_KEY_HEADER]: sessionApiKey },
      signal: AbortSignal.timeout(ALIVE_TIMEOUT_MS),
    });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

/** The body of POST /api/conversations as the agent-server reads it (its defaults not yet applied). */
export type StartConversationRequestBody = z.input<typeof StartConversationRequestSchema>;

export interface AgentClient {
  /** POST /api/conversations; the same conversation_id twice is answered with the existing one. */
  createConversation(request: StartConversationRequestBody): Promise<ConversationInfo>;
  /** GET /api/conversations?ids=...: null for each unknown id. */
  getConversations(ids: string[]): Promise<(ConversationInfo | null)[]>;
  /** DELETE /api/conversations/{id}; an unknown conversation is success. */
  deleteConversation(id: string): Promise<void>;
  /** GET /server_info: among others, how long its agents have done nothing. */
  serverInfo(): Promise<ServerInfo>;
  /**
   * POST /api/file/unpack: unpacks the tar `archive` as it is read into the new directory `path`,
   * as the agent's; 'taken' when `path` already holds something (then nothing was written).
   */
  unpackArchive(path: string, archive: Readable, signal: AbortSignal): Promise<'unpacked' | 'taken'>;
  /** POST /api/bash/execute_bash_command: runs a command as the agent and waits for it. */
  executeBash(request: ExecuteBashRequest): Promise<BashOutput>;
  /** POST /api/skills: the skills a conversation in `projectDir` loads. */
  projectSkills(projectDir: string): Promise<ProjectSkill[]>;
}

/** A skill as POST /api/skills lists it. */
export const ProjectSkillSchema = z.looseObject({ name: z.string(), type: z.string(), triggers: z.array(z.string()).default([]) });
export type ProjectSkill = z.output<typeof ProjectSkillSchema>;
const SkillsAnswerSchema = z.looseObject({ skills: z.array(ProjectSkillSchema) });

const DEFAULT_TIMEOUT_MS = 10_000;
/** An archive unpacked is a whole repository, over a loaded machine's loopback. */
const UNPACK_TIMEOUT_MS = 10 * 60_000;
const ConversationBatchSchema = z.array(ConversationInfoSchema.nullable());

/**
 * The control plane's client of one sandbox's agent-server. Answers are checked against the
 * agent-server's own response schemas. Failures are UpstreamErrors that name what failed but
 * never carry the session key.
 */
export function createAgentClient(target: AgentServerTarget, options: { timeoutMs?: number } = {}): AgentClient {
  const base = target.baseUrl.replace(/\/$/, '');
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;

  /** The answer's status and text; an unreachable agent-server or a 5xx/4xx is a UpstreamError. */
  async function send(method: string, path: string, body?: unknown, waitMs = timeoutMs): Promise<{ status: number; text: string }> {
    let response: Response;
    try {
      const form = body instanceof FormData;
      response = await fetch(`${base}${path}`, {
        method,
        headers: {
          [SESSION_KEY_HEADER_LOWER]: target.sessionApiKey,
          ...(body === undefined || form ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : form ? body : JSON.stringify(body),
        signal: AbortSignal.timeout(waitMs),
      });
    } catch (err) {
      const cause = (err as Error & { cause?: Error }).cause?.message ?? (err as Error).message;
      throw new UpstreamError(`Agent server unreachable (${method} ${path}): ${cause}`);
    }
    return { status: response.status, text: await response.text() };
  }

  function failed(method: string, path: string, answer: { status: number; text: string }): UpstreamError {
    return new UpstreamError(`Agent server answered ${answer.status} to ${method} ${path}: ${answer.text.slice(0, 500)}`);
  }

  async function call<T extends z.ZodType>(schema: T, method: string, path: string, body?: unknown, waitMs?: number): Promise<z.output<T>> {
    const answer = await send(method, path, body, waitMs);
    if (answer.status < 200 || answer.status > 299) throw failed(method, path, answer);
    let json: unknown;
    try {
      json = JSON.parse(answer.text);
    } catch {
      throw new UpstreamError(`Agent server sent a body that is not JSON for ${method} ${path}`);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      throw new UpstreamError(`Agent server sent an unexpected body for ${method} ${path}: ${z.prettifyError(parsed.error).slice(0, 500)}`);
    }
    return parsed.data;
  }

  return {
    createConversation(request) {
      return call(ConversationInfoSchema, 'POST', '/api/conversations', request);
    },
    async getConversations(ids) {
      if (ids.length === 0) return [];
      const query = ids.map((id) => `ids=${encodeURIComponent(id)}`).join('&');
      return call(ConversationBatchSchema, 'GET', `/api/conversations?${query}`);
    },
    async deleteConversation(id) {
      const path = `/api/conversations/${encodeURIComponent(id)}`;
      const answer = await send('DELETE', path);
      if (answer.status !== 404 && (answer.status < 200 || answer.status > 299)) throw failed('DELETE', path, answer);
    },
    serverInfo() {
      return call(ServerInfoSchema, 'GET', '/server_info');
    },
    async unpackArchive(path, archive, signal) {
      let response: Response;
      try {
        response = await fetch(`${base}/api/file/unpack?path=${encodeURIComponent(path)}`, {
          method: 'POST',
          headers: { [SESSION_KEY_HEADER_LOWER]: target.sessionApiKey, 'content-type': 'application/x-tar' },
          body: Readable.toWeb(archive) as ReadableStream<Uint8Array>,
          duplex: 'half',
          signal: AbortSignal.any([signal, AbortSignal.timeout(UNPACK_TIMEOUT_MS)]),
        } as RequestInit);
      } catch (err) {
        const cause = (err as Error & { cause?: Error }).cause?.message ?? (err as Error).message;
        throw new UpstreamError(`Agent server unreachable (POST /api/file/unpack): ${cause}`);
      }
      const answer = { status: response.status, text: await response.text() };
      if (answer.status === 409) return 'taken';
      if (answer.status === 404) {
        throw new UpstreamError("The sandbox's agent-server is older than the control plane and cannot take an archive (POST /api/file/unpack answered 404): start a new sandbox");
      }
      if (answer.status < 200 || answer.status > 299) throw failed('POST', '/api/file/unpack', answer);
      return 'unpacked';
    },
    executeBash(request) {
      // The command's own timeout, and a little for the answer to come back.
      const waitMs = (request.timeout ?? DEFAULT_BASH_TIMEOUT_SECONDS) * 1000 + timeoutMs;
      return call(BashOutputSchema, 'POST', '/api/bash/execute_bash_command', request, waitMs);
    },
    async projectSkills(projectDir) {
      const request = { project_dir: projectDir, load_public: false, load_user: false, load_org: false };
      return (await call(SkillsAnswerSchema, 'POST', '/api/skills', request)).skills;
    },
  };
}
