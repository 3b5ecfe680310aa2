import { type CreateSandboxSpecRequest, iteratePages, type SandboxSpecInfo } from '../../client/index.js';
import { readFile } from 'node:fs/promises';
import { OCI_RUNTIMES, type OciRuntime } from '../../contracts/sandbox.js';
import { packBuildContext } from '../build-context.js';
import { CliError, EXIT_OK, UsageError } from '../cli-error.js';
import { collect } from '../collect.js';
import { type Command, type CommandContext, flag, integerOption, pairsOption, type ParsedArgs, stringOption, stringsOption } from '../command.js';
import { formatFields, formatTable, formatTime, orDash } from '../format.js';
import { noSpec, orNotFound } from '../not-found.js';

function printSpec(ctx: CommandContext, spec: SandboxSpecInfo): void {
  if (ctx.json) return ctx.out.json(spec);
  ctx.out.line(
    formatFields([
      ['id', spec.id],
      ['image', spec.image],
      ['default', spec.is_default ? 'yes' : 'no'],
      ...(spec.build ? [['build', buildState(spec.build)] as const] : []),
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
      ['network', spec.network],
      ...(spec.network === 'allowlist' ? ([['allow', spec.egress.allow.join(', ') || '-'], ['deny', spec.egress.deny.join(', ') || '-']] as const) : []),
      ['warm pool', warmPool(spec)],
      ['created', formatTime(spec.created_at)],
    ]),
  );
}

/** e.g. `READY (cached)`, `FAILED: <why>`. */
function buildState(build: NonNullable<SandboxSpecInfo['build']>): string {
  return `${build.status}${build.cached ? ' (cached)' : ''}${build.detail ? `: ${build.detail}` : ''}`;
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

function networkOption(args: ParsedArgs): CreateSandboxSpecRequest['network'] | undefined {
  const network = stringOption(args, 'network');
  if (network === undefined || network === 'internet' || network === 'none' || network === 'allowlist') return network;
  throw new UsageError(`--network must be internet, none or allowlist, not "${network}"`);
}

function egressOption(args: ParsedArgs): CreateSandboxSpecRequest['egress'] | undefined {
  const allow = stringsOption(args, 'allow');
  const deny = stringsOption(args, 'deny');
  return allow.length + deny.length > 0 ? { allow, deny } : undefined;
}

/** The image the spec runs, or the build that makes it: a Dockerfile and, with --context, a directory packed as `docker build` packs it. */
async function imageOrBuild(args: ParsedArgs): Promise<Pick<CreateSandboxSpecRequest, 'image' | 'build'>> {
  const image = stringOption(args, 'image');
  const dockerfile = stringOption(args, 'dockerfile');
  const contextDir = stringOption(args, 'context');
  if (image !== undefined && dockerfile !== undefined) throw new UsageError('give --image or --dockerfile, not both');
  if (contextDir !== undefined && dockerfile === undefined) throw new UsageError('--context needs --dockerfile');
  if (dockerfile === undefined) {
    if (image === undefined) throw new UsageError('--image or --dockerfile is required');
    return { image };
  }
  const text = await readFile(dockerfile, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new CliError(`cannot read the Dockerfile ${dockerfile}: ${error.message}`);
  });
  const context = contextDir === undefined ? undefined : (await packBuildContext(contextDir)).toString('base64');
  return { build: { dockerfile: text, ...(context !== undefined && { context_tar_base64: context }) } };
}

/** Follows a new spec's build, its log written out as it comes (on stderr with --json), and answers the spec as the build left it. */
async function followBuild(ctx: CommandContext, spec: SandboxSpecInfo): Promise<SandboxSpecInfo> {
  const log = await ctx.client.sandboxSpecs.buildLog(spec.id, { follow: true });
  const to = ctx.json ? ctx.out.stderr : ctx.out.stdout;
  for await (const chunk of log as AsyncIterable<Uint8Array>) to.write(chunk);
  const [built] = await ctx.client.sandboxSpecs.batchGet([spec.id]);
  if (!built) throw new CliError(`sandbox spec ${spec.id} was deleted while it built`);
  return built;
}

function runtimeOption(args: ParsedArgs): OciRuntime | undefined {
  const runtime = stringOption(args, 'runtime');
  if (runtime === undefined) return undefined;
  const known = OCI_RUNTIMES.find((name) => name === runtime);
  if (!known) throw new UsageError(`--runtime must be one of ${OCI_RUNTIMES.join(', ')}, not "${runtime}"`);
  return known;
}

function createRequest(args: ParsedArgs, source: Pick<CreateSandboxSpecRequest, 'image' | 'build'>): CreateSandboxSpecRequest {
  const ports = pairsOption(args, 'port', 'NAME=CONTAINER_PORT').map(([name, port]) => {
    if (!/^\d+$/.test(port)) throw new UsageError(`--port ${name}= needs a port number, not "${port}"`);
    return { name, container_port: Number(port) };
  });
  const secretEnv = pairsOption(args, 'secret-env', 'NAME=VALUE');
  const request: CreateSandboxSpecRequest = {
    ...source,
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
    runtime: runtimeOption(args),
    network: networkOption(args),
    egress: egressOption(args),
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
    usage: '(--image <image> | --dockerfile <file> [--context <dir>]) [options] [-- <command>...]',
    details: [
      "Words after -- are the container command (default: the image's own).",
      'With --dockerfile the engines build the image (FROM an image they have; builds reach no network), tagged by the',
      "hash of the Dockerfile and the context, so the same input is built once. The build's log is printed as it comes;",
      'a failed build exits 1 and its spec is FAILED (sandboxctl specs rm <id> to try again under the same id).',
    ].join('\n'),
    options: {
      image: { type: 'string', value: '<image>', help: 'Container image to run (this or --dockerfile)' },
      dockerfile: { type: 'string', value: '<file>', help: 'Build the image from this Dockerfile instead' },
      context: { type: 'string', value: '<dir>', help: "The build's context, packed as docker build packs it (its .dockerignore applied); default: none" },
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
      runtime: { type: 'string', value: '<runc|runsc>', help: "OCI runtime of its sandboxes (default: the installation's)" },
      network: { type: 'string', value: '<internet|none|allowlist>', help: 'What its sandboxes reach (default internet; allowlist: what --allow names)' },
      allow: { type: 'string', multiple: true, value: '<entry>', help: 'With --network allowlist: a name (*.pypi.org), IPv4 CIDR or host.sandbox.internal:PORT it may reach (repeatable)' },
      deny: { type: 'string', multiple: true, value: '<entry>', help: 'With --network allowlist: an entry refused even where --allow covers it (repeatable)' },
    },
    positionals: { min: 0, max: Number.POSITIVE_INFINITY },
    async run(ctx, args) {
      const source = await imageOrBuild(args);
      const created = await ctx.client.sandboxSpecs.create(createRequest(args, source));
      const spec = created.build ? await followBuild(ctx, created) : created;
      if (spec.build?.status === 'FAILED') {
        throw new CliError(`the image of sandbox spec ${spec.id} did not build: ${spec.build.detail ?? 'no reason given'} (its log: sandboxctl specs build-log ${spec.id})`);
      }
      printSpec(ctx, spec);
      return EXIT_OK;
    },
  },
  {
    name: ['specs', 'build-log'],
    summary: "Print the build log of a spec made from a Dockerfile",
    usage: '<spec> [--follow]',
    options: { follow: { type: 'boolean', help: 'Keep printing until the build ends' } },
    positionals: { min: 1, max: 1 },
    async run(ctx, args) {
      const id = args.positionals[0]!;
      const log = await orNotFound(ctx.client.sandboxSpecs.buildLog(id, { follow: flag(args, 'follow') }), `sandbox spec ${id} not found, or not built from a Dockerfile`);
      for await (const chunk of log as AsyncIterable<Uint8Array>) ctx.out.stdout.write(chunk);
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
