import { connect } from 'node:net';
import type { Duplex } from 'node:stream';

/** What a tunnel through the egress proxy reaches: the address it was judged and resolved to. */
export interface TunnelTarget {
  address: string;
  port: number;
}

/**
 * Pipes an allowed tunnel's bytes both ways to its target, as they are: either side's end or error
 * ends both. A client paused while its handler decided (a brokered secret's lookup) flows again.
 */
export function pipeTunnel(client: Duplex, target: TunnelTarget): void {
  const upstream = connect({ host: target.address, port: target.port });
  upstream.setNoDelay(true);
  const end = () => {
    client.destroy();
    upstream.destroy();
  };
  upstream.on('error', end);
  client.on('error', end);
  upstream.on('close', end);
  client.on('close', end);
  client.pipe(upstream);
  upstream.pipe(client);
  client.resume();
}
