/**
 * A real git server on 127.0.0.1 for clone tests: `git http-backend` (smart HTTP) run as a CGI
 * program behind a small node HTTP server that asks for basic auth. Repositories are bare
 * repositories under `root`; `addRepository` makes one from a map of files.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { mkdir, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { makeTempDir, removeDir } from './temp-dir.js';

export interface GitServer {
  /** http://127.0.0.1:<port> */
  url: string;
  /** Every Authorization header received, for checks that a token went only where it should. */
  authorizations: string[];
  /** Makes `<name>.git` with `files` on `main`, and each of `branches` with its own files on top. */
  addRepository(name: string, files: Record<string, string>, branches?: Record<string, Record<string, string>>): Promise<string>;
  close(): Promise<void>;
}

const GIT_ENV = { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };

/** Where it listens: 127.0.0.1 over plain HTTP unless told otherwise (an HTTPS "remote" with a test CA's certificate). */
export interface GitServerOptions {
  host?: string;
  /** 0 (a free one) unless told. */
  port?: number;
  tls?: { certPem: string; keyPem: string };
}

export async function startGitServer(credentials: { username: string; password: string }, options: GitServerOptions = {}): Promise<GitServer> {
  const root = await makeTempDir('git-server-');
  const authorizations: string[] = [];
  const expected = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
  const handler = (request: IncomingMessage, response: ServerResponse) => {
    const authorization = request.headers.authorization;
    if (authorization) authorizations.push(authorization);
    if (authorization !== expected) {
      response.writeHead(401, { 'www-authenticate': 'Basic realm="git"' }).end('unauthorized');
      return;
    }
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const cgi = spawn('git', ['http-backend'], {
      env: {
        ...process.env,
        ...GIT_ENV,
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: request.method ?? 'GET',
        CONTENT_TYPE: request.headers['content-type'] ?? '',
        HTTP_CONTENT_ENCODING: request.headers['content-encoding'] ?? '',
        GIT_PROTOCOL: String(request.headers['git-protocol'] ?? ''),
        REMOTE_USER: credentials.username,
        REMOTE_ADDR: '127.0.0.1',
      },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    request.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) return void response.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) return;
      headersDone = true;
      let status = 200;
      for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
        else response.setHeader(name, value);
      }
      response.writeHead(status);
      response.write(head.subarray(end + 4));
    });
    cgi.once('close', () => response.end());
  };
  const server: Server = options.tls ? createHttpsServer({ cert: options.tls.certPem, key: options.tls.keyPem }, handler) : createHttpServer(handler);
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, host, resolve));
  const url = `${options.tls ? 'https' : 'http'}://${host}:${(server.address() as AddressInfo).port}`;
  return {
    url,
    authorizations,
    async addRepository(name, files, branches = {}) {
      const work = await makeTempDir('git-work-');
      const git = (...args: string[]) => execFileSync('git', args, { cwd: work, env: { ...process.env, ...GIT_ENV }, stdio: 'pipe' });
      const write = async (set: Record<string, string>) => {
        for (const [path, content] of Object.entries(set)) {
          await mkdir(dirname(join(work, path)), { recursive: true });
          await writeFile(join(work, path), content, { mode: path.endsWith('.sh') ? 0o755 : 0o644 });
        }
      };
      git('init', '-q', '-b', 'main');
      await write(files);
      git('add', '-A');
      git('commit', '-q', '-m', 'first');
      for (const [branch, extra] of Object.entries(branches)) {
        git('checkout', '-q', '-b', branch);
        await write(extra);
        git('add', '-A');
        git('commit', '-q', '-m', `on ${branch}`);
        git('checkout', '-q', 'main');
      }
      const bare = join(root, `${name}.git`);
      execFileSync('git', ['clone', '-q', '--bare', work, bare], { env: { ...process.env, ...GIT_ENV } });
      await removeDir(work);
      return `${url}/${name}.git`;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await removeDir(root);
    },
  };
}
