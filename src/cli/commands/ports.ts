import { createServer, type Server, type Socket } from 'node:net';
import { WebSocket } from 'ws';
import type { SandboxServerClient } from '../../client/index.js';
import { EXIT_OK, UsageError } from '../cli-error.js';
import { type Command, flag, integerOption } from '../command.js';
import { formatTable, orDash } from '../format.js';
import { requireSandbox } from './sandboxes.js';

const ls: Command = {
  name: ['ports', 'ls'],
  summary: "List a sandbox's exposed ports and their preview URLs",
  usage: '<sandbox>',
  details: 'Any other port the sandbox listens on answers at the same URLs, by number (sandboxctl open <sandbox> <port>).',
  positionals: { min: 1, max: 1 },
  async run(ctx, args) {
    const ports = await ctx.client.sandboxes.ports(args.positionals[0]!);
    if (ctx.json) {
      ctx.out.json(ports);
      return EXIT_OK;
    }
    ctx.out.line(formatTable(['NAME', 'PORT', 'PUBLIC', 'URL', 'HOST URL'], ports.map((p) => [orDash(p.name), String(p.port), p.public ? 'yes' : 'no', p.url, orDash(p.host_url)])));
    return EXIT_OK;
  },
};

const open: Command = {
  name: ['open'],
  summary: 'Print a preview link to a port of a sandbox, for a browser without the API key',
  usage: '<sandbox> <port> [--expires <seconds>] [--host]',
  details: [
    '<port> is a number or the name of one of the spec\'s exposed ports (WORKER_1, ...). The link opens the app',
    'in path mode (/api/v1/sandboxes/<id>/ports/<port>/) or, with --host, on its own origin under PREVIEW_DOMAIN.',
    'Every link of a sandbox can be ended at once: DELETE /api/v1/sandboxes/<id>/preview-tokens.',
  ].join('\n'),
  options: {
    expires: { type: 'string', value: '<seconds>', help: 'How long the link works (default 3600, at most 604800)' },
    host: { type: 'boolean', help: 'The host-mode link (needs PREVIEW_DOMAIN on the server)' },
  },
  positionals: { min: 2, max: 2 },
  async run(ctx, args) {
    const [sandboxId, port] = args.positionals as [string, string];
    const token = await ctx.client.sandboxes.previewToken(sandboxId, port, integerOption(args, 'expires', { min: 1, max: 604_800 }));
    if (ctx.json) {
      ctx.out.json(token);
      return EXIT_OK;
    }
    if (flag(args, 'host') && token.host_url === null) throw new UsageError('the server has no PREVIEW_DOMAIN: host-mode links need one');
    ctx.out.line(flag(args, 'host') ? token.host_url! : token.url);
    return EXIT_OK;
  },
};

const portForward: Command = {
  name: ['port-forward'],
  summary: 'Forward a local TCP port to a port in a sandbox, through the control plane',
  usage: '<sandbox> <local>:<remote>',
  details: [
    'Listens on 127.0.0.1:<local> (0 picks a free port, printed on stderr); each connection made there is one',
    'connection to <remote> in the sandbox, carried over a WebSocket. Runs until interrupted (Ctrl-C).',
  ].join('\n'),
  positionals: { min: 2, max: 2 },
  async run(ctx, args) {
    const [sandboxId, mapping] = args.positionals as [string, string];
    const match = /^(\d{1,5}):(\d{1,5})$/.exec(mapping);
    const local = Number(match?.[1]);
    const remote = Number(match?.[2]);
    if (!match || local > 65_535 || remote < 1 || remote > 65_535) throw new UsageError(`"${mapping}" is not <local>:<remote>, e.g. 8080:5173`);
    await requireSandbox(ctx.client, sandboxId);
    const server = await listenLocally(ctx.client, sandboxId, local, remote);
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : local;
    ctx.out.note(`Forwarding 127.0.0.1:${port} -> sandbox ${sandboxId} port ${remote} (Ctrl-C stops)`);
    await new Promise<void>((resolve) => {
      const stop = () => server.close(() => resolve());
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    return EXIT_OK;
  },
};

function listenLocally(client: SandboxServerClient, sandboxId: string, local: number, remote: number): Promise<Server> {
  const server = createServer((socket) => tunnel(client, sandboxId, remote, socket));
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(local, '127.0.0.1', () => resolve(server));
  });
}

/** One local connection, carried to the sandbox port over its own WebSocket until either side ends. */
function tunnel(client: SandboxServerClient, sandboxId: string, remote: number, socket: Socket): void {
  const { url, headers } = client.sandboxes.portForwardSocket(sandboxId, remote);
  const ws = new WebSocket(url, { headers });
  socket.pause();
  ws.on('open', () => socket.resume());
  socket.on('data', (chunk) => ws.send(chunk, { binary: true }));
  socket.on('end', () => ws.close(1000));
  socket.on('error', () => ws.close(1000));
  ws.on('message', (data: Buffer) => socket.write(data));
  ws.on('close', () => socket.end());
  ws.on('error', (err) => {
    process.stderr.write(`sandboxctl: port-forward to sandbox ${sandboxId} port ${remote} failed: ${err.message}\n`);
    socket.destroy();
  });
}

export const portCommands: readonly Command[] = [ls, open, portForward];
