import { type CreateSandboxSpecRequest, iteratePages, type SandboxSpecInfo } from '../../client/index.js';
import { CliError, EXIT_OK, UsageError } from '../cli-error.js';
import { collect } from '../collect.js';
import { type Command, type CommandContext, flag, integerOption, pairsOption, type ParsedArgs, stringOption } from '../command.js';
import { formatFields, formatTable, formatTime, orDash } from '../format.js';
import { noSpec, orNotFound } from '../not-found.js';

function printSpec(ctx: CommandContext, spec: SandboxSpecInfo): void {
  if (ctx.json) return ctx.out.json(spec);
  ctx.out.line(
    formatFields([
      ['id', spec.id],
      ['image', spec.image],
      ['default', spec.is_default ? 'yes' : 'no'],
      ['command', spec.command ? spec.command.join(' ') : '(image default)'],
      ['working dir', spec.working_dir],
      ...Object.entries(spec.initial_env).map(([name, value]) => [`env ${name}`, spec.secret_env.includes(name) ? `${value} (secret)` : value] as const),
      ...spec.exposed_ports.map((port) => [`port ${port.name}`, String(port.container_port)] as const),
      ['cpus', orDash(spec.cpus)],
      ['memory MB', orDash(spec.memory_mb)],
      ['pids limit', orDash(spec.pids_limit)],
      ['idle pause s', orDash(spec.idle_pause_seconds)],
      ['ttl s', orDash(spec.ttl_seconds)],
      ['resume on access', spec.resume_on_access ? 'yes' : 'no'],
      ['warm pool', warmPool(spec)],
      ['created', formatTime(spec.created_at)],
    ]),
  );
}

/** Ready members over the pool's size, e.g. `2/2`; `-` for a spec without a pool. */
function warmPool(spec: SandboxSpecInfo): string {
  return spec.warm_pool_size > 0 ? `${spec.warm_pool_ready}/${spec.warm_pool_size}` : '-';
}

function numberOption(args: ParsedArgs, name: string): number | undefined {
  const raw = stringOption(args, name);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value)) throw new UsageError(`--${name} must be a number, not "${raw}"`);
  return value;
}

function createRequest(args: ParsedArgs): CreateSandboxSpecRequest {
  const image = stringOption(args, 'image');
  if (image === undefined) throw new UsageError('--image is required');
  const ports = pairsOption(args, 'port', 'NAME=CONTAINER_PORT').map(([name, port]) => {
    if (!/^\d+$/.test(port)) throw new UsageError(`--port ${name}= needs a port number, not "${port}"`);
    return { name, container_port: Number(port) };
  });
  const secretEnv = pairsOption(args, 'secret-env', 'NAME=VALUE');
  const request: CreateSandboxSpecRequest = {
    image,
    id: stringOption(args, 'id'),
    command: args.positionals.length > 0 ? args.positionals : undefined,
    initial_env: Object.fromEntries([...pairsOption(args, 'env', 'NAME=VALUE'), ...secretEnv]),
    secret_env: secretEnv.length > 0 ? secretEnv.map(([name]) => name) : undefined,
    working_dir: stringOption(args, 'working-dir'),
    exposed_ports: ports.length > 0 ? ports : undefined,
    cpus: numberOption(args, 'cpus'),
    memory_mb: integerOption(args, 'memory-mb', { min: 1 }),
    pids_limit: integerOption(args, 'pids-limit', { min: 1 }),
    idle_pause_seconds: integerOption(args, 'idle-pause', { min: 1 }),
    ttl_seconds: integerOption(args, 'ttl', { min: 1 }),
    resume_on_access: flag(args, 'no-resume-on-access') ? false : undefined,
    warm_pool_size: integerOption(args, 'warm-pool', { min: 0 }),
  };
  // Absent settings are left out so the server applies its defaults.
  return Object.fromEntries(Object.entries(request).filter(([, value]) => value !== undefined)) as CreateSandboxSpecRequest;
}

export const specCommands: Command[] = [
  {
    name: ['specs', 'ls'],
    summary: 'List sandbox specs',
    usage: '',
    positionals: { min: 0, max: 0 },
    async run(ctx) {
      const specs = await collect(iteratePages((pageId) => ctx.client.sandboxSpecs.search({ page_id: pageId })));
      if (ctx.json) {
        ctx.out.json(specs);
        return EXIT_OK;
      }
      ctx.out.line(
        formatTable(
          ['ID', 'IMAGE', 'DEFAULT', 'WARM', 'WORKING DIR', 'CREATED'],
          specs.map((s) => [s.id, s.image, s.is_default ? 'yes' : '', warmPool(s), s.working_dir, formatTime(s.created_at)]),
        ),
      );
      return EXIT_OK;
    },
  },
  {
    name: ['specs', 'show'],
    summary: 'Show one sandbox spec',
    usage: '<spec>',
    positionals: { min: 1, max: 1 },
    async run(ctx, args) {
      const id = args.positionals[0]!;
      const [spec] = await ctx.client.sandboxSpecs.batchGet([id]);
      if (!spec) throw new CliError(noSpec(id));
      printSpec(ctx, spec);
      return EXIT_OK;
    },
  },
  {
    name: ['specs', 'create'],
    summary: 'Add a sandbox spec',
    usage: '--image <image> [options] [-- <command>...]',
    details: 'Words after -- are the container command (default: the image\'s own).',
    options: {
      image: { type: 'string', value: '<image>', help: 'Container image to run (required)' },
      id: { type: 'string', value: '<id>', help: 'Spec id (default: the image)' },
      env: { type: 'string', multiple: true, value: '<NAME=VALUE>', help: 'Environment variable of the container (repeatable)' },
      'secret-env': {
        type: 'string',
        multiple: true,
        value: '<NAME=VALUE>',
        help: 'Environment variable whose value is secret: never shown again, masked in what the agent prints (repeatable)',
      },
      'working-dir': { type: 'string', value: '<path>', help: 'Absolute working directory (default /workspace)' },
      port: { type: 'string', multiple: true, value: '<NAME=PORT>', help: 'Container port to publish (repeatable; default AGENT_SERVER=8000)' },
      cpus: { type: 'string', value: '<n>', help: 'CPU limit, e.g. 1.5' },
      'memory-mb': { type: 'string', value: '<n>', help: 'Memory limit in MB' },
      'pids-limit': { type: 'string', value: '<n>', help: 'Most processes the container may run' },
      'idle-pause': { type: 'string', value: '<seconds>', help: 'Pause sandboxes unused this long' },
      ttl: { type: 'string', value: '<seconds>', help: 'Delete sandboxes this long after they start' },
      'no-resume-on-access': { type: 'boolean', help: 'Do not resume a paused sandbox when it is used' },
      'warm-pool': { type: 'string', value: '<n>', help: 'Keep this many sandboxes ready, so starts are RUNNING at once' },
    },
    positionals: { min: 0, max: Number.POSITIVE_INFINITY },
    async run(ctx, args) {
      printSpec(ctx, await ctx.client.sandboxSpecs.create(createRequest(args)));
      return EXIT_OK;
    },
  },
  {
    name: ['specs', 'rm'],
    summary: 'Delete a sandbox spec that no sandbox uses',
    usage: '<spec>',
    positionals: { min: 1, max: 1 },
    async run(ctx, args) {
      const id = args.positionals[0]!;
      const answer = await orNotFound(ctx.client.sandboxSpecs.delete(id), noSpec(id));
      if (ctx.json) ctx.out.json(answer);
      else ctx.out.line(`Deleted sandbox spec ${id}`);
      return EXIT_OK;
    },
  },
];
