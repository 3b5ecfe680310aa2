import { ConfigError } from '../errors/config-error.js';
import { configHelp, loadConfig, type SandboxServerConfig } from './config.js';

// Only config.js is imported up front: the logger (pulled in by everything else) reads LOG_LEVEL
// when it loads, so the environment is validated first and the rest is imported after.

const COMMANDS = ['', 'image build'];

/** Runs the CLI; resolves to an exit code, or to undefined while the server keeps running. */
async function main(args: string[]): Promise<number | undefined> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(configHelp());
    return 0;
  }
  const command = args.join(' ');
  if (!COMMANDS.includes(command) && args[0] !== 'resources') {
    process.stderr.write(`sandbox-server: unknown command "${command}"\n\n${configHelp()}`);
    return 2;
  }
  let config: SandboxServerConfig;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`sandbox-server: ${error.message}\n`);
    return 2;
  }
  if (args[0] === 'resources') return resources(config, args.slice(1));
  return command === 'image build' ? buildImage(config) : serveUntilSignalled(config);
}

async function resources(config: SandboxServerConfig, args: string[]): Promise<number> {
  const { runResourcesCommand } = await import('./installation/resources-command.js');
  return runResourcesCommand(config, args, {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  });
}

async function buildImage(config: SandboxServerConfig): Promise<number> {
  const { buildAgentServerImage } = await import('./image/index.js');
  try {
    await buildAgentServerImage({
      baseImage: config.SANDBOX_BASE_IMAGE,
      tag: config.AGENT_SERVER_IMAGE,
      onProgress: (line) => process.stderr.write(`${line}\n`),
    });
  } catch (error) {
    process.stderr.write(`sandbox-server: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  process.stdout.write(`built ${config.AGENT_SERVER_IMAGE} from ${config.SANDBOX_BASE_IMAGE}\n`);
  return 0;
}

async function serveUntilSignalled(config: SandboxServerConfig): Promise<undefined> {
  const { logger } = await import('../logger.js');
  const { startSandboxServer } = await import('./server.js');
  const { terminalStartupReport } = await import('./startup-report.js');
  // A person at a terminal is shown progress and a summary; a log collector gets JSON lines.
  const server = await startSandboxServer(config, process.stdout.isTTY ? { report: terminalStartupReport((text) => process.stdout.write(text)) } : {});
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing requests in flight; sandboxes keep running');
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  return undefined;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`sandbox-server: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
