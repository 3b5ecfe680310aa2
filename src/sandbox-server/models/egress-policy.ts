import { z } from '@hono/zod-openapi';
import { SANDBOX_NETWORKS } from '../../contracts/sandbox.js';
import { MAX_EGRESS_ENTRIES, parseEgressEntry } from '../net/egress-policy.js';

const ENTRY_EXAMPLES = '`github.com`, `*.pypi.org`, `api.example.com:443`, `10.1.0.0/16`, `192.0.2.7:5432`, `host.sandbox.internal:11434`';

const EgressEntryListSchema = z
  .array(z.string().max(300))
  .max(MAX_EGRESS_ENTRIES)
  .superRefine((entries, ctx) => {
    entries.forEach((entry, index) => {
      const parsed = parseEgressEntry(entry);
      if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', path: [index], message: parsed });
    });
  });

/** Our extension: what an `allowlist` sandbox may reach; deny entries win, anything neither list names is refused. */
export const EgressPolicySchema = z
  .object({
    allow: EgressEntryListSchema.default([]).openapi({ description: `Entries a sandbox may reach: ${ENTRY_EXAMPLES}` }),
    deny: EgressEntryListSchema.default([]).openapi({ description: 'Entries refused even where an allow entry covers them (same forms)' }),
  })
  .strict()
  .openapi('EgressPolicy', {
    description:
      'Names (a leading `*.` for any name below) are reached through the control plane\'s egress proxy and resolver; IPv4 addresses and CIDR blocks through the packet filter; each with an optional `:port`. `host.sandbox.internal:PORT` opens that port of the host. Applies to network `allowlist` only.',
  });
export type EgressPolicy = z.infer<typeof EgressPolicySchema>;

/** What is answered: the lists as normalized. */
export const EgressPolicyInfoSchema = z.object({ allow: z.array(z.string()), deny: z.array(z.string()) }).openapi('EgressPolicyInfo');

/** Our extension: PATCH /api/v1/sandboxes/{id}. */
export const UpdateSandboxRequestSchema = z
  .object({
    egress: EgressPolicySchema.nullable().openapi({
      description: "The sandbox's own egress policy, in force at once (its network must be allowlist); null goes back to its spec's",
    }),
  })
  .strict()
  .openapi('UpdateSandboxRequest');
export type UpdateSandboxRequest = z.infer<typeof UpdateSandboxRequestSchema>;

/** Our extension: what a sandbox may reach, as GET and PATCH /api/v1/sandboxes/{id}[/egress] answer. */
export const SandboxEgressInfoSchema = z
  .object({
    sandbox_id: z.string(),
    network: z.enum(SANDBOX_NETWORKS),
    egress: EgressPolicyInfoSchema,
    inherited: z.boolean().openapi({ description: "true: the policy is its spec's; false: the sandbox's own, set with PATCH" }),
  })
  .openapi('SandboxEgressInfo');
export type SandboxEgressInfo = z.infer<typeof SandboxEgressInfoSchema>;
