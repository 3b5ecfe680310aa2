import type { SandboxServerConfig } from '../config.js';
import { type DataDirLock, lockDataDir } from '../installation/data-dir-lock.js';
import type { Component } from './component.js';

/** A PGlite data directory is locked first: a second process on it is refused, naming the holder. */
export function dataDirLockComponent(config: SandboxServerConfig): Component<DataDirLock | undefined> {
  let lock: DataDirLock | undefined;
  return {
    name: 'data directory lock',
    async start() {
      if (config.DATABASE_URL) return undefined;
      lock = await lockDataDir(config.DATA_DIR, { port: config.PORT === 0 ? null : config.PORT, command: 'sandbox-server' });
      return lock;
    },
    stop: async () => lock?.release(),
  };
}
