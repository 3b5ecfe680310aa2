import { type Agent, type IncomingMessage, type OutgoingHttpHeaders, request as httpRequest, type ServerResponse } from 'node:http';

// The bytes are piped as they came, so their length stays true; the rest are per connection.
const RESPONSE_HEADERS_DROPPED = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade']);

/** An answer a fast path writes itself: an error body, already serialized. */
export interface WrittenAnswer {
  status: number;
  headers: OutgoingHttpHeaders;
  body: string;
}

export interface PipeRequestOptions {
  host: string;
  port: number;
  /** The path and query upstream. */
  path: string;
  /** The headers that go upstream, as the caller chose them (see requestHeadersWithout). */
  headers: OutgoingHttpHeaders;
  agent: Agent;
  /** Headers set on the upstream's answer (the request id), over the upstream's own. */
  answerHeaders: OutgoingHttpHeaders;
  /** Called once, when the answer's status line is written (the upstream's, or a failure's). */
  answered(status: number): void;
  /**
   * The answer when the upstream failed before anything was sent: `reached` is false when it could
   * not be connected to or gave no answer, true when its answer broke HTTP. undefined: the client
   * went away meanwhile.
   */
  failure(error: Error, reached: boolean): Promise<WrittenAnswer | undefined> | WrittenAnswer | undefined;
}

/**
 * One request passed on at the node:http level, for a server's fast path: the request and answer
 * are piped byte for byte over a pooled upstream connection, and no web Request, Response or
 * Headers is built. The answer's head goes out with its first body bytes (or its end): until then
 * a broken answer can still become the caller's failure answer rather than a connection closed
 * with no bytes; after that, a failure cuts the client's connection, the only way left to say the
 * body is incomplete. A client that goes away takes its upstream request with it.
 */
export function pipeRequest(req: IncomingMessage, res: ServerResponse, options: PipeRequestOptions): void {
  let responded = false;
  let failed = false;
  const outgoing = httpRequest(
    { host: options.host, port: options.port, method: req.method, path: options.path, headers: options.headers, agent: options.agent },
    (incoming) => {
      responded = true;
      const head = answerHead(incoming, options.answerHeaders);
      const status = incoming.statusCode ?? 502;
      const writeHead = () => {
        if (res.headersSent) return;
        res.writeHead(status, incoming.statusMessage, head);
        options.answered(status);
      };
      incoming.once('data', writeHead);
      incoming.once('end', writeHead);
      incoming.pipe(res);
      incoming.once('error', fail);
    },
  );
  outgoing.once('error', fail);

  async function fail(error: Error): Promise<void> {
    if (failed || res.destroyed) return;
    failed = true;
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const answer = await options.failure(error, responded || isParseError(error));
    if (!answer || res.destroyed || res.headersSent) return;
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
    options.answered(answer.status);
  }

  res.once('close', () => {
    if (!res.writableFinished) outgoing.destroy();
  });
  if (hasBody(req)) req.pipe(outgoing);
  else outgoing.end();
}

/** The request's headers for upstream, without `dropped` (lower-case names); the body is piped unchanged, so its length stays. */
export function requestHeadersWithout(req: IncomingMessage, dropped: ReadonlySet<string>): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  const { headers: given } = req;
  for (const name in given) if (!dropped.has(name)) headers[name] = given[name];
  if (given['content-length'] !== undefined) headers['content-length'] = given['content-length'];
  return headers;
}

/** The upstream's answer headers as they go to the client, without the hop's own, with `extra` over them. */
function answerHead(incoming: IncomingMessage, extra: OutgoingHttpHeaders): OutgoingHttpHeaders {
  const head: OutgoingHttpHeaders = {};
  const { headers } = incoming;
  for (const name in headers) if (!RESPONSE_HEADERS_DROPPED.has(name)) head[name] = headers[name];
  for (const name in extra) head[name] = extra[name];
  return head;
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** Node's HTTP parser refused what the upstream sent (its codes start with HPE_): it answered, but not in HTTP. */
function isParseError(error: Error): boolean {
  return (error as NodeJS.ErrnoException).code?.startsWith('HPE_') === true;
}
