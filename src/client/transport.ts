import type { ValidationErrorItem } from '../http/errors.js';
import { SandboxServerError, SandboxServerUnreachableError } from './errors.js';
import { fillPath, type OperationName, SANDBOX_SERVER_OPERATIONS } from './operations.js';
import { send } from '../http/send.js';

export type QueryValue = string | number | boolean | readonly string[] | null | undefined;

export interface RequestOptions {
  params?: Record<string, string>;
  /** Arrays become repeated parameters (`id=a&id=b`); undefined and null are left out. */
  query?: Record<string, QueryValue>;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as is (a FormData sets its own content-type). */
  body?: RequestInit['body'];
  signal?: AbortSignal;
}

export interface TransportOptions {
  /** e.g. http://127.0.0.1:3000 */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <key>`; absent for a server with authentication off. */
  apiKey?: string;
}

/** Requests of the operation table, with the API key, network failures and error bodies typed. */
export class Transport {
  readonly baseUrl: string;
  readonly #apiKey: string | undefined;

  constructor(options: TransportOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#apiKey = options.apiKey;
  }

  url(path: string, query: Record<string, QueryValue> = {}): URL {
    const url = new URL(`${this.baseUrl}${path}`);
    for (const [name, value] of Object.entries(query)) {
      if (value === undefined || value === null) continue;
      for (const item of Array.isArray(value) ? value : [value]) url.searchParams.append(name, String(item));
    }
    return url;
  }

  authHeaders(): Record<string, string> {
    return this.#apiKey ? { authorization: `Bearer ${this.#apiKey}` } : {};
  }

  /** The answer whatever its status; throws only when there is none. */
  async request(name: OperationName, options: RequestOptions = {}): Promise<Response> {
    const operation = SANDBOX_SERVER_OPERATIONS[name];
    const url = this.url(fillPath(operation.path, options.params ?? {}), options.query);
    const headers: Record<string, string> = this.authHeaders();
    let body = options.body;
    if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.json);
    }
    const request = new Request(url, { method: operation.method.toUpperCase(), headers, body, signal: options.signal });
    try {
      return await send(request);
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error;
      throw new SandboxServerUnreachableError(this.baseUrl, { cause: error });
    }
  }

  /** The answer when it is 2xx; a SandboxServerError with the server's detail otherwise. */
  async ok(name: OperationName, options: RequestOptions = {}): Promise<Response> {
    const response = await this.request(name, options);
    if (response.ok) return response;
    const operation = SANDBOX_SERVER_OPERATIONS[name];
    throw await errorOf(response, operation.method.toUpperCase(), fillPath(operation.path, options.params ?? {}));
  }

  /** The 2xx answer's JSON body. */
  async json<T>(name: OperationName, options: RequestOptions = {}): Promise<T> {
    return (await (await this.ok(name, options)).json()) as T;
  }
}

async function errorOf(response: Response, method: string, path: string): Promise<SandboxServerError> {
  const text = await response.text();
  let detail: string | ValidationErrorItem[] = text.trim() || response.statusText || `HTTP ${response.status}`;
  try {
    const body = JSON.parse(text) as { detail?: unknown };
    if (typeof body.detail === 'string' || Array.isArray(body.detail)) detail = body.detail as string | ValidationErrorItem[];
  } catch {
    // Not JSON (a proxy's HTML page, say): the text itself is the best detail there is.
  }
  return new SandboxServerError(response.status, detail, method, path);
}
