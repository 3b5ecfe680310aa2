import { connect } from 'node:net';
import { ExpiringMap } from '../../expiring-map.js';

/** How long a found address is trusted before it is looked for again (an app may restart on the other family). */
const REMEMBER_MS = 5_000;
const LOOPBACKS = ['127.0.0.1', '::1'] as const;

export type LoopbackAddress = (typeof LOOPBACKS)[number];

export interface ListeningAddresses {
  /**
   * Which loopback address an app in the sandbox listens on for `port`: 127.0.0.1 (and 0.0.0.0)
   * first, then ::1, where Node 18+ apps that listen on "localhost" (Vite's default) end up. null
   * when neither accepts a connection.
   */
  find(port: number): Promise<LoopbackAddress | null>;
  /** The address `find` found for `port` lately, without looking: undefined when it is not known. */
  known(port: number): LoopbackAddress | undefined;
}

export function createListeningAddresses(): ListeningAddresses {
  const found = new ExpiringMap<number, LoopbackAddress>(REMEMBER_MS);
  return {
    known: (port) => found.get(port),
    async find(port) {
      const address = found.get(port);
      if (address) return address;
      for (const candidate of LOOPBACKS) {
        if (await accepts(candidate, port)) {
          found.set(port, candidate);
          return candidate;
        }
      }
      found.delete(port);
      return null;
    },
  };
}

function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
