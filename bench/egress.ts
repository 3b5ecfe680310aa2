/**
 * The egress proxy of `allowlist` sandboxes: a 100 MB download through each of its doors beside the
 * same download made directly, in the same run. The "remote" server is a node:http server in a
 * process of its own on a loopback address of its own; the proxy runs in this process, as it runs
 * in the control plane; the client is curl, as a sandbox's tools would be. Doors: the forward proxy
 * (HTTP_PROXY), a CONNECT tunnel (HTTPS_PROXY; the bytes are tunnelled as they come, so plain HTTP
 * inside measures the tunnel alone) and the transparent door (a connection caught by the packet
 * rules, judged by its Host header). Rounds alternate the four. Run: `npm run bench -- egress`.
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { logger } from '../src/logger.js';
import { EgressProxy } from '../src/sandbox-server/egress/proxy.js';
import { createUpstreamResolver } from '../src/sandbox-server/egress/upstream.js';
import { egressRulesOf } from '../src/sandbox-server/net/egress-policy.js';
import { formatRatio, loadAverage, printTable } from './measure.js';

const execute = promisify(execFile);
const SIZE_MB = 100;
const ROUNDS = 9;
const NAME = 'download.bench';
const REMOTE = `127.68.${1 + Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;
const SERVER = `const body = Buffer.alloc(${SIZE_MB} * 1024 * 1024, 7);
require('node:http').createServer((req, res) => res.writeHead(200, { 'content-length': body.length }).end(body)).listen(0, '${REMOTE}', function () { console.log(this.address().port); });`;

/** One download with curl: MB/s as curl measured it, after checking every byte arrived. */
async function download(args: string[]): Promise<number> {
  const { stdout } = await execute('curl', ['-sS', '-o', '/dev/null', '-w', '%{size_download} %{speed_download}', ...args], { maxBuffer: 1024 * 1024 });
  const [size = '0', speed = '0'] = stdout.trim().split(' ');
  if (Number(size) !== SIZE_MB * 1024 * 1024) throw new Error(`downloaded ${size} bytes, not ${SIZE_MB} MB: curl ${args.join(' ')}`);
  return Number(speed) / (1024 * 1024);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

export async function run(): Promise<void> {
  const server = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => server.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim()))));
  const proxy = new EgressProxy({
    identify: (address) => (address === '127.0.0.1' ? { sandboxId: 'bench', rules: egressRulesOf({ allow: [NAME], deny: [] }), gateway: '127.0.0.1' } : undefined),
    resolveUpstream: createUpstreamResolver({ hosts: { [NAME]: REMOTE }, hostAddress: '127.0.0.1' }),
    onDenied: (denial) => {
      throw new Error(`the bench's download was denied: ${JSON.stringify(denial)}`);
    },
    log: logger,
  });
  const doors = await proxy.listen('127.0.0.1', 0, 0);
  const url = `http://${NAME}:${port}/file`;
  const ways: [string, string[]][] = [
    ['direct', ['--resolve', `${NAME}:${port}:${REMOTE}`, url]],
    ['forward proxy (HTTP_PROXY)', ['--proxy', `http://127.0.0.1:${doors.port}`, url]],
    ['CONNECT tunnel (HTTPS_PROXY)', ['--proxy', `http://127.0.0.1:${doors.port}`, '--proxytunnel', url]],
    ['transparent door', ['--connect-to', `${NAME}:${port}:127.0.0.1:${doors.transparentPort}`, url]],
  ];
  const speeds = new Map<string, number[]>(ways.map(([name]) => [name, []]));
  try {
    for (const [, args] of ways) await download(args);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, args] of round % 2 === 0 ? ways : [...ways].reverse()) speeds.get(name)?.push(await download(args));
    }
  } finally {
    server.kill();
    await proxy.close();
  }
  const direct = median(speeds.get('direct') ?? []);
  console.log(`${SIZE_MB} MB over loopback, ${ROUNDS} rounds each, median; load average ${loadAverage()}`);
  printTable(
    ['way', 'MB/s', 'of direct (goal >= 0.8x)'],
    ways.map(([name]) => {
      const speed = median(speeds.get(name) ?? []);
      return [name, speed.toFixed(0), name === 'direct' ? '-' : formatRatio(speed / direct)];
    }),
  );
}
