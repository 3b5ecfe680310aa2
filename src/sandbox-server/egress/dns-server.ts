import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { decideEgress, HOST_NAME, hostPortsOf, PROXY_NAME } from '../net/egress-policy.js';
import { buildAnswer, buildFormatError, parseQuery, RCODE } from './dns-message.js';
import { type EgressDenial, type EgressSandbox, normalizeAddress } from './proxy.js';

/**
 * The resolver of `allowlist` sandboxes: every DNS packet such a sandbox sends (to Docker's resolver,
 * which forwards it, or to any name server it names) is redirected here by its packet rules. It
 * answers an allowed name with the sandbox's gateway, where the egress proxy's doors are, so a name
 * is only ever reached through the proxy; `host.sandbox.internal` likewise, when a port of it is
 * allowed. Any other name is REFUSED and counted as a denial: a DNS tunnel (data in the labels of
 * names under a domain the sandbox may not reach) gets no answer and no query leaves the machine.
 */
export interface EgressDnsOptions {
  identify: (address: string) => EgressSandbox | undefined;
  onDenied: (denial: EgressDenial) => void;
}

export class EgressDns {
  readonly #options: EgressDnsOptions;
  readonly #udp: UdpSocket;
  readonly #tcp: Server;

  constructor(options: EgressDnsOptions) {
    this.#options = options;
    this.#udp = createSocket('udp4');
    this.#udp.on('message', (message, remote) => this.#udp.send(this.answer(message, remote.address), remote.port, remote.address));
    this.#tcp = createServer((socket) => this.#serveTcp(socket));
  }

  /** Listens for UDP and TCP on `host`:`port` (0: a free port, the same for both); resolves to the port. */
  async listen(host: string, port: number): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.#tcp.once('error', reject);
      this.#tcp.listen(port, host, () => resolve());
    });
    const taken = (this.#tcp.address() as AddressInfo).port;
    await new Promise<void>((resolve, reject) => {
      this.#udp.once('error', reject);
      this.#udp.bind(taken, host, () => resolve());
    });
    return taken;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.#udp.close(() => resolve()));
    await new Promise<void>((resolve) => this.#tcp.close(() => resolve()));
  }

  /** The answer to one query from `source`. */
  answer(message: Buffer, source: string): Buffer {
    const question = parseQuery(message);
    if (!question) return buildFormatError(message);
    const sandbox = this.#options.identify(normalizeAddress(source));
    if (!sandbox) return buildAnswer(question, RCODE.refused);
    if (question.name === PROXY_NAME) return buildAnswer(question, RCODE.noError, [sandbox.gateway]);
    const allowed = question.name === HOST_NAME ? hostPortsOf(sandbox.rules).length > 0 : decideEgress(sandbox.rules, question.name, null).allowed;
    if (!allowed) {
      this.#options.onDenied({ sandboxId: sandbox.sandboxId, via: 'dns', target: question.name, reason: 'name not allowed' });
      return buildAnswer(question, RCODE.refused);
    }
    return buildAnswer(question, RCODE.noError, [sandbox.gateway]);
  }

  /** DNS over TCP: each message framed by its 2-byte length. */
  #serveTcp(socket: Socket): void {
    let pending = Buffer.alloc(0);
    socket.on('error', () => socket.destroy());
    socket.setTimeout(10_000, () => socket.destroy());
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
        const message = pending.subarray(2, 2 + pending.readUInt16BE(0));
        pending = pending.subarray(2 + message.length);
        const answer = this.answer(message, socket.remoteAddress ?? '');
        const length = Buffer.alloc(2);
        length.writeUInt16BE(answer.length);
        socket.write(Buffer.concat([length, answer]));
      }
    });
  }
}
