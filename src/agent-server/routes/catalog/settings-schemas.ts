/**
 * GET /api/settings/agent-schema and /conversation-schema: the settings a client may send when it
 * starts a conversation, described in OpenHands' SettingsSchema shape (sections of typed fields) so
 * its settings forms render. The fields are read from the same zod schemas that validate
 * StartConversationRequest, so the description cannot drift from what we accept.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { LlmSchema, StartConversationRequestSchema } from '../../../contracts/agent-server/conversation-requests.js';
import { LLM_SECRET_FIELDS } from '../../../contracts/agent-server/llm-settings.js';
import { jsonContent } from '../responses.js';

const ValueTypeSchema = z.enum(['string', 'integer', 'number', 'boolean', 'array', 'object']);
type ValueType = z.output<typeof ValueTypeSchema>;

const SettingsFieldSchema = z
  .object({
    key: z.string(),
    label: z.string(),
    section: z.string(),
    section_label: z.string(),
    value_type: ValueTypeSchema,
    default: z.unknown().optional(),
    secret: z.boolean(),
  })
  .openapi('SettingsFieldSchema');

const SettingsSchemaSchema = z
  .object({
    model_name: z.string(),
    sections: z.array(
      z.object({ key: z.string(), label: z.string(), fields: z.array(SettingsFieldSchema) }).openapi('SettingsSectionSchema'),
    ),
  })
  .openapi('SettingsSchema');
export type SettingsSchema = z.output<typeof SettingsSchemaSchema>;

interface SectionSource {
  key: string;
  label: string;
  schema: z.ZodObject;
  /** Keys left out: ids, messages and other per-request values that are not settings. */
  omit?: readonly string[];
  /** Keys whose values are never shown back. */
  secrets?: readonly string[];
}

type JsonSchemaProperty = { type?: string | string[]; default?: unknown; anyOf?: JsonSchemaProperty[] };

/** The JSON Schema type of a property, through the `anyOf` that nullable values become. */
function valueTypeOf(property: JsonSchemaProperty): ValueType {
  const types = [property.type, ...(property.anyOf ?? []).map((p) => p.type)].flat().filter((t) => t && t !== 'null');
  const parsed = ValueTypeSchema.safeParse(types[0]);
  return parsed.success ? parsed.data : 'object';
}

function labelOf(key: string): string {
  const words = key.split('_').join(' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export function settingsSchema(modelName: string, sources: readonly SectionSource[]): SettingsSchema {
  return {
    model_name: modelName,
    sections: sources.map((source) => {
      const json = z.toJSONSchema(source.schema, { io: 'input', unrepresentable: 'any' }) as {
        properties?: Record<string, JsonSchemaProperty>;
      };
      const fields = Object.entries(json.properties ?? {})
        .filter(([key]) => !source.omit?.includes(key))
        .map(([key, property]) => ({
          key: `${source.key}.${key}`,
          label: labelOf(key),
          section: source.key,
          section_label: source.label,
          value_type: valueTypeOf(property),
          ...(property.default !== undefined && { default: property.default }),
          secret: source.secrets?.includes(key) ?? false,
        }));
      return { key: source.key, label: source.label, fields };
    }),
  };
}

const AGENT_SETTINGS = settingsSchema('AgentSettings', [
  { key: 'llm', label: 'LLM', schema: LlmSchema, secrets: [...LLM_SECRET_FIELDS] },
]);

const CONVERSATION_SETTINGS = settingsSchema('ConversationSettings', [
  {
    key: 'conversation',
    label: 'Conversation',
    schema: StartConversationRequestSchema,
    omit: ['agent', 'workspace', 'conversation_id', 'initial_message', 'secrets'],
  },
]);

const agentSchemaRoute = createRoute({
  method: 'get',
  path: '/api/settings/agent-schema',
  tags: ['Settings'],
  summary: "The agent's settings a conversation is started with (its LLM)",
  responses: { 200: jsonContent(SettingsSchemaSchema, 'Settings schema') },
});

const conversationSchemaRoute = createRoute({
  method: 'get',
  path: '/api/settings/conversation-schema',
  tags: ['Settings'],
  summary: 'The conversation settings a conversation is started with',
  responses: { 200: jsonContent(SettingsSchemaSchema, 'Settings schema') },
});

export function registerSettingsSchemas(app: OpenAPIHono): void {
  app.openapi(agentSchemaRoute, (c) => c.json(AGENT_SETTINGS, 200));
  app.openapi(conversationSchemaRoute, (c) => c.json(CONVERSATION_SETTINGS, 200));
}
