import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { decideEgress, HOST_NAME } from '../net/egress-policy.js';
import { type EgressDenial, type EgressSandbox, normalizeAddress } from './proxy.js';

/**
 * A sandbox's plain TCP connection to `host.sandbox.internal:PORT` (its gateway, PORT): the packet
 * rules send it to the relay listening for PORT, which checks the sandbox's policy again (a rule
 * being rewritten may lag a change) and joins it to PORT of the host's address. One listener per
 * port some policy opens, made on first need.
 */
export interface HostRelaysOptions {
  listenHost: string;
  /** SANDBOX_HOST_ADDRESS: where the host's services are dialled (127.0.0.1 reaches those on loopback). */
  hostAddress: string;
  identify: (address: string) => EgressSandbox | undefined;
  onDenied: (denial: EgressDenial) => void;
}

export class HostRelays {
  readonly #options: HostRelaysOptions;
  readonly #servers = new Map<number, { server: Server; port: number }>();

  constructor(options: HostRelaysOptions) {
    this.#options = options;
  }

  /** Host port -> relay port, for the ports with a listener. */
  ports(): Map<number, number> {
    return new Map([...this.#servers].map(([hostPort, { port }]) => [hostPort, port]));
  }

  /** Makes a relay for each of `hostPorts` that has none, and closes the relays of ports no longer wanted. */
  async keep(hostPorts: ReadonlySet<number>): Promise<void> {
    for (const hostPort of hostPorts) {
      if (this.#servers.has(hostPort)) continue;
      const server = createServer((socket) => this.#relay(socket, hostPort));
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, this.#options.listenHost, () => resolve());
      });
      this.#servers.set(hostPort, { server, port: (server.address() as AddressInfo).port });
    }
    for (const [hostPort, { server }] of this.#servers) {
      if (hostPorts.has(hostPort)) continue;
      this.#servers.delete(hostPort);
      server.close();
    }
  }

  async close(): Promise<void> {
    await this.keep(new Set());
  }

  #relay(client: Socket, hostPort: number): void {
    client.on('error', () => client.destroy());
    const sandbox = this.#options.identify(normalizeAddress(client.remoteAddress ?? ''));
    if (!sandbox) return void client.destroy();
    if (!decideEgress(sandbox.rules, HOST_NAME, hostPort).allowed) {
      this.#options.onDenied({ sandboxId: sandbox.sandboxId, via: 'proxy', target: `${HOST_NAME}:${hostPort}`, reason: 'not in the allow list' });
      return void client.destroy();
    }
    const upstream = connect({ host: this.#options.hostAddress, port: hostPort });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    upstream.on('error', end);
    upstream.on('close', end);
    client.on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  }
}
