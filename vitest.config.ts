import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: more workers than that only adds contention.
    maxWorkers: 2,
    env: {
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
      // testcontainers' reaper image cannot be pulled without a registry; tests clean up themselves.
      TESTCONTAINERS_RYUK_DISABLED: process.env.TESTCONTAINERS_RYUK_DISABLED ?? 'true',
      // Inside a container (/.dockerenv) testcontainers would reach published ports through the
      // bridge gateway, a non-loopback Host our servers refuse; tests talk to 127.0.0.1 only.
      TESTCONTAINERS_HOST_OVERRIDE: process.env.TESTCONTAINERS_HOST_OVERRIDE ?? '127.0.0.1',
      // Warm pools keep sandboxes running; control planes the tests start (in-process and spawned)
      // keep none unless a test of pools asks, so no suite pays for idle ones.
      SANDBOX_WARM_POOL: '0',
    },
  },
});
