import { z } from '@hono/zod-openapi';

const counts = {
  calls: z.number().int().openapi({ description: 'LLM calls the provider answered (2xx)' }),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
};

/** Our extension: what a sandbox's agents used through the LLM relay, as the providers reported it. */
export const SandboxLlmUsageSchema = z
  .object({
    sandbox_id: z.string(),
    ...counts,
    conversations: z.array(z.object({ conversation_id: z.string(), ...counts }).openapi('ConversationLlmUsage')),
  })
  .openapi('SandboxLlmUsage');
export type SandboxLlmUsage = z.output<typeof SandboxLlmUsageSchema>;
