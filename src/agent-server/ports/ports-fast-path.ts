import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { firstRefusal, type AdmissionStep } from '../../http/admission.js';
import { ERROR_PAGE_HEADERS, errorPageHtml, prefersHtml } from '../../http/error-page.js';
import { domainErrorAnswer } from '../../http/errors.js';
import { observeRequest, type Metrics } from '../../http/metrics/index.js';
import { arrivalOf, firstValue, requestUrlOf } from '../../http/node-arrival.js';
import { pipeRequest, requestHeadersWithout, type WrittenAnswer } from '../../http/pipe-request.js';
import { REQUEST_ID_HEADER, requestIdFrom, writeRequestLine } from '../../http/request-log/index.js';
import { logger as rootLogger, type Logger } from '../../logger.js';
import { REQUEST_HEADERS_DROPPED, TO_APPS } from './forward-to-port.js';
import type { ListeningAddresses } from './listening-address.js';
import { nothingListens, nothingListensTitle } from './nothing-listens.js';

/** The routes the app serves these requests on, as requests answered here are labelled. */
export const PORT_ROUTE = '/api/ports/:port';
export const PORT_PATH_ROUTE = '/api/ports/:port/*';
const PORTS_PREFIX = '/api/ports/';
/** The port, then the app's path (with its leading slash), if any. */
const PORT_PATH = /^\/api\/ports\/(\d{1,5})(\/.*)?$/;

export interface PortsFastPathOptions {
  /**
   * The steps the app's middleware takes before its port routes (the browser guard's host and
   * site checks, the session key), built by the same functions: a request any of them refuses is
   * left to the app, which answers the refusal.
   */
  admission: readonly AdmissionStep[];
  /** Whether a request that passed admission presented a key (false when the server takes none), for its log line. */
  keyed: boolean;
  /** Found by the app's port routes: a port not known there is left to them. */
  listeningAddresses: ListeningAddresses;
  metrics: Metrics;
  logger?: Logger;
}

/**
 * The common case of `/api/ports/{port}/...` (a preview's hop to an app in the sandbox) answered
 * straight on node:http, before the Hono app: a request the app's admission steps let in, to a
 * port whose listening address the app's routes found lately, and no WebSocket. The request and
 * answer are piped over a pooled connection to the app (http/pipe-request.ts), with the app's log
 * line, metrics and 502 answer. Answers false, touching nothing, for every other request.
 * test/agent-server/ports-fast-path.test.ts holds the two doors to the same answers.
 */
export function createPortsFastPath(options: PortsFastPathOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const log = options.logger ?? rootLogger;
  return function servePortFast(req, res) {
    if (!req.url?.startsWith(PORTS_PREFIX)) return false;
    const { headers } = req;
    if (headers.upgrade !== undefined) return false;
    const url = requestUrlOf(req);
    const match = url && PORT_PATH.exec(url.pathname);
    if (!url || !match) return false;
    const port = Number(match[1]);
    if (port < 1 || port > 65_535) return false;
    const arrival = arrivalOf(req, url);
    if (firstRefusal(options.admission, arrival) !== undefined) return false;
    const address = options.listeningAddresses.known(port);
    if (address === undefined) return false;
    const startedAt = performance.now();
    const requestId = requestIdFrom(firstValue(headers[REQUEST_ID_HEADER]));
    const route = match[2] === undefined ? PORT_ROUTE : PORT_PATH_ROUTE;
    pipeRequest(req, res, {
      host: address,
      port,
      path: `${match[2] ?? '/'}${url.search}`,
      headers: requestHeadersWithout(req, REQUEST_HEADERS_DROPPED),
      agent: TO_APPS,
      answerHeaders: { [REQUEST_ID_HEADER]: requestId },
      answered(status) {
        const request = { requestId, method: arrival.method, route, path: url.pathname, authenticated: options.keyed, status, startedAt };
        writeRequestLine(log, request);
        observeRequest(options.metrics, request);
      },
      failure: () => nothingListensAnswer(port, firstValue(headers.accept), requestId),
    });
    return true;
  };
}

/** The app's answer when nothing answers on the port: a page for a browser, else the error's JSON body. */
function nothingListensAnswer(port: number, accept: string | undefined, requestId: string): WrittenAnswer {
  const error = nothingListens(port);
  if (prefersHtml(accept)) return { status: 502, headers: { ...ERROR_PAGE_HEADERS, [REQUEST_ID_HEADER]: requestId }, body: errorPageHtml(502, nothingListensTitle(port), error.message) };
  const { status, body, headers } = domainErrorAnswer(error);
  return { status, headers: { ...headers, 'content-type': 'application/json', [REQUEST_ID_HEADER]: requestId }, body: JSON.stringify(body) };
}
