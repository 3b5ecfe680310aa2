import type { Settings, UpdateSettingsRequest } from '../../client/index.js';
import { EXIT_OK, UsageError } from '../cli-error.js';
import { type Command, type CommandContext, type ParsedArgs } from '../command.js';
import { formatFields, formatTime } from '../format.js';

/** What `settings set` takes: each field of PATCH /api/v1/settings and how its value is read. */
const FIELDS = {
  warm_pool_size: 'integer',
  default_memory_mb: 'integer',
  default_pids_limit: 'integer',
  default_cpus: 'number',
  default_disk_mb: 'integer',
  default_runtime: 'text',
} as const satisfies Record<keyof UpdateSettingsRequest, 'integer' | 'number' | 'text'>;

function isField(name: string): name is keyof typeof FIELDS {
  return Object.hasOwn(FIELDS, name);
}

function printSettings(ctx: CommandContext, settings: Settings): void {
  if (ctx.json) return ctx.out.json(settings);
  ctx.out.line(
    formatFields([
      ['warm_pool_size', String(settings.warm_pool_size)],
      ['default_memory_mb', String(settings.default_memory_mb)],
      ['default_pids_limit', String(settings.default_pids_limit)],
      ['default_cpus', String(settings.default_cpus)],
      ['default_disk_mb', String(settings.default_disk_mb)],
      ['default_runtime', settings.default_runtime],
      ['updated', formatTime(settings.updated_at)],
    ]),
  );
}

/** `warm_pool_size=4 default_runtime=runsc` as the request body; the server checks the bounds. */
function updateRequest(args: ParsedArgs): UpdateSettingsRequest {
  const request: Record<string, number | string> = {};
  for (const pair of args.positionals) {
    const [name = '', value] = pair.split(/=(.*)/s);
    if (!isField(name) || value === undefined) throw new UsageError(`"${pair}" is not FIELD=VALUE with FIELD one of ${Object.keys(FIELDS).join(', ')}`);
    const kind = FIELDS[name];
    if (kind === 'text') {
      request[name] = value;
      continue;
    }
    const number = Number(value);
    if (value.trim() === '' || !Number.isFinite(number) || (kind === 'integer' && !Number.isInteger(number))) {
      throw new UsageError(`${name} must be ${kind === 'integer' ? 'a whole number' : 'a number'}, not "${value}"`);
    }
    request[name] = number;
  }
  return request as UpdateSettingsRequest;
}

const show: Command = {
  name: ['settings', 'show'],
  summary: "Show the installation's shared settings (the default spec's warm pool, default limits and runtime)",
  usage: '',
  positionals: { min: 0, max: 0 },
  async run(ctx) {
    printSettings(ctx, await ctx.client.settings.get());
    return EXIT_OK;
  },
};

const set: Command = {
  name: ['settings', 'set'],
  summary: 'Change shared settings for every control plane on the database (admin key)',
  usage: 'FIELD=VALUE ...',
  details: `FIELD is one of ${Object.keys(FIELDS).join(', ')}. The default spec follows at once; specs created earlier keep their own limits.`,
  positionals: { min: 1, max: Infinity },
  async run(ctx, args) {
    printSettings(ctx, await ctx.client.settings.update(updateRequest(args)));
    return EXIT_OK;
  },
};

export const settingsCommands: Command[] = [show, set];
