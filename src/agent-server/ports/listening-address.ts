import { connect } from 'node:net';

/** How long a found address is trusted before it is looked for again (an app may restart on the other family). */
const REMEMBER_MS = 5_000;
const LOOPBACKS = ['127.0.0.1', '::1'] as const;

export type LoopbackAddress = (typeof LOOPBACKS)[number];

/**
 * Which loopback address an app in the sandbox listens on for `port`: 127.0.0.1 (and 0.0.0.0)
 * first, then ::1, where Node 18+ apps that listen on "localhost" (Vite's default) end up. null
 * when neither accepts a connection.
 */
export function createListeningAddresses(): (port: number) => Promise<LoopbackAddress | null> {
  const found = new Map<number, { address: LoopbackAddress; at: number }>();
  return async (port) => {
    const known = found.get(port);
    if (known && Date.now() - known.at < REMEMBER_MS) return known.address;
    for (const address of LOOPBACKS) {
      if (await accepts(address, port)) {
        found.set(port, { address, at: Date.now() });
        return address;
      }
    }
    found.delete(port);
    return null;
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
