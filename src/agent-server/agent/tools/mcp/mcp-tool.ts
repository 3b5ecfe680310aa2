/**
 * One tool of an MCP server as the agent holds it: an MCPToolDefinition carrying the server's own
 * `mcp_tool`, offered to the LLM with the server's input schema, taking an MCPToolAction (the
 * arguments as `data`) and giving an MCPToolObservation. As in OpenHands, arguments are checked
 * against the input schema before the call (a mistake comes back to the model at once), a failed
 * or timed-out call is an observation with `is_error`, and a successful one starts with
 * "[Tool 'NAME' executed.]".
 */
import { ErrorCode, McpError, type CallToolResult, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaType, JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import {
  MCPToolActionSchema,
  MCPToolObservationSchema,
  MCPToolSchema,
  ToolDefinitionSchema,
  type ContentItem,
  type JsonValue,
} from '../../../../events/index.js';
import { textContent, type ParsedArguments, type Tool } from '../tool.js';
import type { McpServer } from './mcp-server.js';
import type { z } from 'zod';

export type MCPToolAction = z.output<typeof MCPToolActionSchema>;
export type MCPToolObservation = z.output<typeof MCPToolObservationSchema>;

type JsonObject = Record<string, JsonValue>;

const validators = new AjvJsonSchemaValidator();

/** The MCP tool `mcpTool` of `server`, called by the LLM as `name`. */
export function createMcpTool(name: string, mcpTool: McpTool, server: McpServer): Tool<MCPToolAction, MCPToolObservation> {
  const description = mcpTool.description ?? 'No description provided';
  const parameters: Record<string, unknown> = { ...mcpTool.inputSchema };
  let validate: JsonSchemaValidator<unknown> | null | undefined;
  const validator = () => {
    if (validate === undefined) {
      try {
        validate = validators.getValidator(parameters as JsonSchemaType);
      } catch {
        // A schema ajv cannot compile: the server checks the arguments itself.
        validate = null;
      }
    }
    return validate;
  };
  const observation = (content: ContentItem[], isError: boolean) =>
    MCPToolObservationSchema.parse({ kind: 'MCPToolObservation', tool_name: name, content, is_error: isError });

  return {
    name,
    description,
    parameters,
    actionKind: 'MCPToolAction',
    observationKind: 'MCPToolObservation',
    definition: ToolDefinitionSchema.parse({
      kind: 'MCPToolDefinition',
      title: name,
      description,
      action_type: 'MCPToolAction',
      observation_type: 'MCPToolObservation',
      annotations: mcpTool.annotations ? annotationsOf(mcpTool.annotations) : null,
      meta: mcpTool._meta ?? null,
      mcp_tool: wireTool(mcpTool),
    }),
    parseArguments(args: unknown): ParsedArguments<MCPToolAction> {
      const data = argumentObject(args);
      if (data === undefined) return { ok: false, error: `Invalid arguments for tool "${name}": expected a JSON object.` };
      const checked = validator()?.(data);
      if (checked && !checked.valid) return { ok: false, error: `Validation error for MCP tool '${name}' args: ${checked.errorMessage}` };
      return { ok: true, action: MCPToolActionSchema.parse({ kind: 'MCPToolAction', data }) };
    },
    async execute(action, ctx = {}) {
      try {
        const result = await server.callTool(mcpTool.name, action.data, ctx.signal);
        return resultObservation(name, result, observation);
      } catch (error) {
        return observation([textContent(callFailure(name, server, error, ctx.signal))], true);
      }
    },
    // The server is the conversation's and outlives this tool (a re-listing makes new ones).
    close: async () => {},
  };
}

function resultObservation(
  name: string,
  result: CallToolResult,
  observation: (content: ContentItem[], isError: boolean) => MCPToolObservation,
): MCPToolObservation {
  const header = `[Tool '${name}' executed.]`;
  const content = result.content.flatMap(contentItem);
  if (result.isError) {
    const lines = content.map((item) => ('text' in item ? item.text : '[Image]'));
    return observation([textContent([header, ...lines].join('\n'))], true);
  }
  return observation([textContent(header), ...content], false);
}

/** MCP content as the event model holds it: text, images as data URLs, resources by their text or address. */
function contentItem(block: CallToolResult['content'][number]): ContentItem[] {
  switch (block.type) {
    case 'text':
      return [textContent(block.text)];
    case 'image':
      return [{ type: 'image', image_urls: [`data:${block.mimeType};base64,${block.data}`], cache_prompt: false }];
    case 'resource':
      return [textContent('text' in block.resource ? block.resource.text : `[Binary resource ${block.resource.uri}]`)];
    case 'resource_link':
      return [textContent(`[Resource ${block.uri}${block.description ? `: ${block.description}` : ''}]`)];
    case 'audio':
      return [textContent(`[Audio (${block.mimeType}), not shown]`)];
  }
}

function callFailure(name: string, server: McpServer, error: unknown, signal: AbortSignal | undefined): string {
  if (signal?.aborted) return `MCP tool '${name}' was interrupted: the conversation stopped.`;
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
    return (
      `MCP tool '${name}' timed out after ${server.spec.callTimeoutSeconds} seconds. The tool server may be unresponsive ` +
      'or the operation is taking too long. Consider retrying or using an alternative approach.'
    );
  }
  return `Error calling MCP tool ${name}: ${error instanceof Error ? error.message : String(error)}`;
}

/** The LLM's arguments as an object, with nulls left out (the model's way of not giving one). */
function argumentObject(args: unknown): JsonObject | undefined {
  let value = args;
  if (typeof args === 'string') {
    try {
      value = args.trim() === '' ? {} : JSON.parse(args);
    } catch {
      return undefined;
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null)) as JsonObject;
}

/** MCP's hints, unset ones at MCP's defaults, as the event model's ToolAnnotations. */
function annotationsOf(annotations: NonNullable<McpTool['annotations']>) {
  return {
    title: annotations.title ?? null,
    readOnlyHint: annotations.readOnlyHint ?? false,
    destructiveHint: annotations.destructiveHint ?? true,
    idempotentHint: annotations.idempotentHint ?? false,
    openWorldHint: annotations.openWorldHint ?? true,
  };
}

/** The fields of MCP's Tool the event model knows: a newer server may send more. */
function wireTool(tool: McpTool): z.input<typeof MCPToolSchema> {
  const { annotations, icons, execution } = tool;
  return {
    name: tool.name,
    title: tool.title ?? null,
    description: tool.description ?? null,
    inputSchema: tool.inputSchema as JsonObject,
    outputSchema: (tool.outputSchema as JsonObject | undefined) ?? null,
    annotations: annotations
      ? {
          title: annotations.title ?? null,
          readOnlyHint: annotations.readOnlyHint ?? null,
          destructiveHint: annotations.destructiveHint ?? null,
          idempotentHint: annotations.idempotentHint ?? null,
          openWorldHint: annotations.openWorldHint ?? null,
        }
      : null,
    icons: icons?.map((icon) => ({ src: icon.src, mimeType: icon.mimeType ?? null, sizes: icon.sizes ?? null })) ?? null,
    execution: execution ? { taskSupport: execution.taskSupport ?? null } : null,
    _meta: (tool._meta as JsonObject | undefined) ?? null,
  };
}
