/**
 * The agent-server program (`agent-server`, bundled to dist/agent-server.js): check the settings,
 * load the conversations, listen, and on SIGTERM or SIGINT stop accepting, let in-flight requests
 * finish, flush and close the stores, and exit 0. Bad settings exit 2 with one line on stderr.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '../errors/config-error.js';
import { serveWebSocketUpgradesOnly } from '../http/upgrade.js';
import { type AgentUser, lookupAgentUser } from './agent-user.js';
import { ensureAgentUser, ensurePrivateDataDir, ensureWorkspace } from './create-agent-user.js';
import { HELP, parseConfig, type AgentServerConfig } from './config.js';
import { loadInitialEnv } from './initial-env.js';

/** How long shutdown waits for open connections (WebSocket streams included) before exiting anyway. */
const SHUTDOWN_GRACE_MS = 10_000;

function readConfig(): AgentServerConfig {
  try {
    const result = parseConfig(process.argv.slice(2), process.env);
    if (result.help) {
      process.stdout.write(HELP);
      process.exit(0);
    }
    return result.config;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`agent-server: ${error.message}\n`);
    process.exit(2);
  }
}

async function main(): Promise<void> {
  // Before the settings: a spec's initial_env may set them, as it did from the environment.
  let secretEnvValues: string[];
  try {
    secretEnvValues = await loadInitialEnv(process.env);
  } catch (error) {
    process.stderr.write(`agent-server: cannot read the spec's initial environment: ${(error as Error).message}\n`);
    process.exit(2);
  }
  const config = readConfig();
  // Loaded only once the settings are checked: the logger reads LOG_LEVEL as it loads.
  const [{ logger }, { createAgentServerApp }] = await Promise.all([
    import('../logger.js'),
    import('./app.js'),
  ]);

  let agentServer;
  let agentUser: AgentUser | undefined;
  try {
    if (config.createAgentUser && config.agentUser) {
      if (await ensureAgentUser(config.agentUser)) logger.info({ agentUser: config.agentUser }, 'agent user created');
      await ensurePrivateDataDir(config.dataDir);
    }
    agentUser = config.agentUser ? await lookupAgentUser(config.agentUser) : undefined;
    if (config.createAgentUser && agentUser) await ensureWorkspace(process.cwd(), agentUser);
  } catch (error) {
    logger.fatal({ err: error, agentUser: config.agentUser }, 'agent-server cannot find or create its agent user');
    process.exit(1);
  }
  try {
    agentServer = await createAgentServerApp({
      dataDir: config.dataDir,
      sessionKeys: config.sessionKeys,
      sessionKeyDigests: config.sessionKeyDigests,
      agentUser,
      maskedValues: secretEnvValues,
      browser: { allowedHosts: config.allowedHosts, corsOrigins: config.corsOrigins },
      maxRequestBodyBytes: config.maxBodyMb * 1024 * 1024,
      dataOwner: config.dataOwner,
    });
  } catch (error) {
    logger.fatal({ err: error, dataDir: config.dataDir }, 'agent-server cannot open its data directory');
    process.exit(1);
  }
  const { listener, injectWebSocket } = agentServer;

  const server = createServer(listener);
  server.listen(config.port, config.host, () => {
    logger.info(
      { host: config.host, port: (server.address() as AddressInfo).port, dataDir: config.dataDir, auth: config.sessionKeys.length + config.sessionKeyDigests.length > 0, agentUser: agentUser?.name },
      'agent-server listening',
    );
  });
  serveWebSocketUpgradesOnly(server, injectWebSocket);
  server.once('error', (error) => {
    logger.fatal({ err: error, host: config.host, port: config.port }, 'agent-server cannot listen');
    process.exit(1);
  });

  const shutdown = async (signal: NodeJS.Signals): Promise<void> => {
    logger.info({ signal }, 'agent-server stopping');
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const grace = new Promise<void>((resolve) => setTimeout(resolve, SHUTDOWN_GRACE_MS).unref());
    await Promise.race([closed, grace]);
    await agentServer.close();
    logger.info('agent-server stopped');
    process.exit(0);
  };
  process.once('SIGTERM', (signal) => void shutdown(signal));
  process.once('SIGINT', (signal) => void shutdown(signal));
}

await main();
