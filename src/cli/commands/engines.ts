import type { EngineInfo, RegisterEngineRequest } from '../../client/index.js';
import { EXIT_OK, UsageError } from '../cli-error.js';
import { collectPages } from '../collect.js';
import { type Command, type CommandContext, integerOption, pairsOption, type ParsedArgs, stringOption } from '../command.js';
import { formatFields, formatTable, formatTime, orDash } from '../format.js';
import { noEngine, orNotFound } from '../not-found.js';

/** `3/20` for three sandboxes on an engine that takes twenty; `3` without a limit. */
function load(engine: EngineInfo): string {
  return engine.max_sandboxes === null ? String(engine.sandboxes) : `${engine.sandboxes}/${engine.max_sandboxes}`;
}

/** A drain's progress, e.g. `moved 2, remaining 3 (1 staying)`; `-` when the engine is not draining. */
function drainProgress(engine: EngineInfo): string {
  if (!engine.drain) return '-';
  const { moved, remaining, staying } = engine.drain;
  return `moved ${moved}, remaining ${remaining}${staying > 0 ? ` (${staying} staying)` : ''}`;
}

function printEngine(ctx: CommandContext, engine: EngineInfo): void {
  if (ctx.json) return ctx.out.json(engine);
  ctx.out.line(
    formatFields([
      ['name', engine.name],
      ['docker url', engine.docker_url],
      ['advertise host', engine.advertise_host],
      ['state', engine.state],
      ['health', orDash(engine.health)],
      ...(engine.health_detail ? [['health detail', engine.health_detail] as const] : []),
      ['sandboxes', load(engine)],
      ['drain', drainProgress(engine)],
      ...Object.entries(engine.labels).map(([key, value]) => [`label ${key}`, value] as const),
      ['created', formatTime(engine.created_at)],
    ]),
  );
}

const ls: Command = {
  name: ['engines', 'ls'],
  summary: 'List the Docker engines sandboxes are placed on',
  usage: '',
  positionals: { min: 0, max: 0 },
  async run(ctx) {
    const engines = await collectPages((page) => ctx.client.engines.search(page));
    if (ctx.json) {
      ctx.out.json(engines);
      return EXIT_OK;
    }
    ctx.out.line(
      formatTable(
        ['NAME', 'STATE', 'HEALTH', 'SANDBOXES', 'ADVERTISE HOST', 'DRAIN', 'DOCKER URL'],
        engines.map((e) => [e.name, e.state, orDash(e.health), load(e), e.advertise_host, drainProgress(e), e.docker_url]),
      ),
    );
    return EXIT_OK;
  },
};

function registerRequest(args: ParsedArgs): RegisterEngineRequest {
  const [name, dockerUrl] = args.positionals as [string, string];
  const advertiseHost = stringOption(args, 'advertise-host');
  if (advertiseHost === undefined) throw new UsageError('--advertise-host is required');
  return {
    name,
    docker_url: dockerUrl,
    advertise_host: advertiseHost,
    max_sandboxes: integerOption(args, 'max-sandboxes', { min: 1 }) ?? null,
    labels: Object.fromEntries(pairsOption(args, 'label', 'KEY=VALUE')),
  };
}

const add: Command = {
  name: ['engines', 'add'],
  summary: 'Register a Docker engine; every control plane drives it at once',
  usage: '<name> <docker-url> --advertise-host <host> [--max-sandboxes <n>] [--label KEY=VALUE ...]',
  details: '<docker-url> is unix:///path, tcp://host:port (TLS with DOCKER_TLS_CERT_DIR on the server) or ssh://[user@]host; sandboxes publish their ports on, and are reached at, <host>.',
  options: {
    'advertise-host': { type: 'string', value: '<host>', help: "Where the engine publishes its sandboxes' ports" },
    'max-sandboxes': { type: 'string', value: '<n>', help: 'Live sandboxes it takes at most (default: no limit)' },
    label: { type: 'string', multiple: true, value: '<KEY=VALUE>', help: "Label matched by specs' engine_labels (repeatable)" },
  },
  positionals: { min: 2, max: 2 },
  async run(ctx, args) {
    printEngine(ctx, await ctx.client.engines.register(registerRequest(args)));
    return EXIT_OK;
  },
};

/** A command that changes one engine's state and prints it. */
function stateCommand(verb: 'cordon' | 'uncordon' | 'drain', summary: string, details: string): Command {
  return {
    name: ['engines', verb],
    summary,
    usage: '<name>',
    details,
    positionals: { min: 1, max: 1 },
    async run(ctx, args) {
      const name = args.positionals[0]!;
      printEngine(ctx, await orNotFound(ctx.client.engines[verb](name), noEngine(name)));
      return EXIT_OK;
    },
  };
}

const cordon = stateCommand('cordon', 'Place no new sandboxes on an engine; those on it stay', 'Refused (409) while the engine drains; "sandboxctl engines uncordon" ends a drain.');
const uncordon = stateCommand('uncordon', 'Place new sandboxes on an engine again (ends a cordon or a drain)', 'Sandboxes already moved away by a drain stay where they are.');
const drain = stateCommand(
  'drain',
  'Move an engine\'s paused and idle sandboxes to other engines, and place none on it',
  'Each paused sandbox is moved by snapshot with its files, conversations and history, and stays paused; running ones are moved once idle (DRAIN_IDLE_SECONDS), and run again on their new engine; those of specs that are not movable stay. "sandboxctl engines ls" shows the progress.',
);

const rm: Command = {
  name: ['engines', 'rm'],
  summary: 'Remove an engine (refused while sandboxes or snapshots are on it)',
  usage: '<name>',
  positionals: { min: 1, max: 1 },
  async run(ctx, args) {
    const name = args.positionals[0]!;
    const answer = await orNotFound(ctx.client.engines.remove(name), noEngine(name));
    if (ctx.json) ctx.out.json(answer);
    else ctx.out.line(`Removed engine ${name}`);
    return EXIT_OK;
  },
};

export const engineCommands: Command[] = [ls, add, cordon, uncordon, drain, rm];
