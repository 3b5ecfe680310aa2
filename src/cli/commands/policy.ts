import type { SandboxEgressInfo } from '../../client/index.js';
import { EXIT_OK, UsageError } from '../cli-error.js';
import { type Command, type CommandContext, flag, stringsOption } from '../command.js';
import { formatFields } from '../format.js';
import { noSandbox, orNotFound } from '../not-found.js';

function printPolicy(ctx: CommandContext, info: SandboxEgressInfo): void {
  if (ctx.json) return ctx.out.json(info);
  const list = (entries: readonly string[]) => (entries.length > 0 ? entries.join(', ') : '-');
  ctx.out.line(
    formatFields([
      ['sandbox', info.sandbox_id],
      ['network', info.network],
      ['allow', info.network === 'allowlist' ? list(info.egress.allow) : info.network === 'internet' ? '(the internet)' : '(nothing)'],
      ['deny', list(info.egress.deny)],
      ['from', info.inherited ? 'its spec' : 'the sandbox (set with policy set)'],
    ]),
  );
}

const ENTRY_HELP = 'a name (github.com, *.pypi.org), an IPv4 address or CIDR, each with an optional :port; host.sandbox.internal:PORT opens a port of the host';

export const policyCommands: Command[] = [
  {
    name: ['policy', 'show'],
    summary: "Show what a sandbox may reach: its network and egress policy",
    usage: '<sandbox>',
    positionals: { min: 1, max: 1 },
    async run(ctx, args) {
      const id = args.positionals[0]!;
      printPolicy(ctx, await orNotFound(ctx.client.sandboxes.egress(id), noSandbox(id)));
      return EXIT_OK;
    },
  },
  {
    name: ['policy', 'set'],
    summary: "Replace an allowlist sandbox's egress policy, in force at once",
    usage: '<sandbox> (--allow <entry>... [--deny <entry>...] | --inherit)',
    details: `Each entry is ${ENTRY_HELP}. Deny entries win; anything not allowed is refused. --inherit goes back to the spec's policy.`,
    options: {
      allow: { type: 'string', multiple: true, value: '<entry>', help: 'What the sandbox may reach (repeatable)' },
      deny: { type: 'string', multiple: true, value: '<entry>', help: 'What it may not, even where an allow entry covers it (repeatable)' },
      inherit: { type: 'boolean', help: "Drop the sandbox's own policy: its spec's applies again" },
    },
    positionals: { min: 1, max: 1 },
    async run(ctx, args) {
      const id = args.positionals[0]!;
      const allow = stringsOption(args, 'allow');
      const deny = stringsOption(args, 'deny');
      const inherit = flag(args, 'inherit');
      if (inherit && allow.length + deny.length > 0) throw new UsageError('--inherit takes no --allow or --deny');
      const egress = inherit ? null : { allow, deny };
      printPolicy(ctx, await orNotFound(ctx.client.sandboxes.update(id, { egress }), noSandbox(id)));
      return EXIT_OK;
    },
  },
];
