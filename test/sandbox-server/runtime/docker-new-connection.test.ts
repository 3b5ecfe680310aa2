import { createServer } from 'node:http';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import { join } from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { takesNewConnections } from '../../../src/sandbox-server/runtime/docker-new-connection.js';
import { connectDocker } from '../../helpers/docker.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';

const mainEngine = await connectDocker();

describe('takesNewConnections', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await makeTempDir('new-connection-');
  });
  afterAll(() => removeDir(dir));

  it.runIf(mainEngine)('is true of a running engine', async () => {
    expect(await takesNewConnections(mainEngine!)).toBe(true);
  });

  it('is false of an engine whose socket is gone', async () => {
    expect(await takesNewConnections(new Docker({ socketPath: join(dir, 'none.sock') }))).toBe(false);
  });

  // What dockerd 20.10 does on SIGTERM: it closes its listener (removing the socket) and then stops
  // its containers, while the connections it has keep being served.
  it('is false of an engine that closed its listener, though calls on its pooled connections still answer', async () => {
    const socketPath = join(dir, 'engine.sock');
    const engine = createServer((request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('OK');
    });
    // The listener apart from the HTTP server, so that closing it leaves the connections be.
    const listener: NetServer = createNetServer((socket) => engine.emit('connection', socket));
    await new Promise<void>((resolve) => listener.listen(socketPath, resolve));
    const docker = new Docker({ socketPath });
    try {
      expect(await takesNewConnections(docker)).toBe(true);
      await docker.ping();
      listener.close();
      expect(String(await docker.ping())).toBe('OK');
      expect(await takesNewConnections(docker)).toBe(false);
    } finally {
      engine.closeAllConnections();
    }
  });
});
