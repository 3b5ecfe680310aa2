/**
 * What the agent loop needs from a tool: how to describe it to the LLM, how to turn the LLM's
 * arguments into a typed Action, and how to run that Action into an Observation.
 *
 * Mistakes of the agent (bad arguments aside, which `parseArguments` reports) come back as
 * observations with `is_error: true`, for the LLM to read and correct; `execute` throws only on
 * bugs. A tool instance serves one conversation and may own processes; `close` releases them.
 */
import { z } from 'zod';
import {
  ToolDefinitionSchema,
  type Action,
  type FileEditorActionSchema,
  type FileEditorObservationSchema,
  type FinishActionSchema,
  type FinishObservationSchema,
  type TaskTrackerActionSchema,
  type TaskTrackerObservationSchema,
  type TerminalActionSchema,
  type TerminalObservationSchema,
  type ThinkActionSchema,
  type ThinkObservationSchema,
  type Observation,
  type ToolDefinition,
} from '../../../events/index.js';

export type TerminalAction = z.output<typeof TerminalActionSchema>;
export type TerminalObservation = z.output<typeof TerminalObservationSchema>;
export type FileEditorAction = z.output<typeof FileEditorActionSchema>;
export type FileEditorObservation = z.output<typeof FileEditorObservationSchema>;
export type TaskTrackerAction = z.output<typeof TaskTrackerActionSchema>;
export type TaskTrackerObservation = z.output<typeof TaskTrackerObservationSchema>;
export type FinishAction = z.output<typeof FinishActionSchema>;
export type FinishObservation = z.output<typeof FinishObservationSchema>;
export type ThinkAction = z.output<typeof ThinkActionSchema>;
export type ThinkObservation = z.output<typeof ThinkObservationSchema>;

/** Any Action and Observation of the event model: each tool takes and gives one kind of them. */
export type ToolAction = Action;
export type ToolObservation = Observation;

export interface ToolContext {
  /** Aborted when the run stops (pause, delete): a running command is interrupted and reported. */
  signal?: AbortSignal;
}

export type ParsedArguments<A> = { ok: true; action: A } | { ok: false; error: string };

export interface Tool<A extends { kind: string } = ToolAction, O extends { kind: string } = ToolObservation> {
  /** The function name the LLM calls, e.g. `terminal`. */
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the function's arguments (the Action without `kind`). */
  readonly parameters: Record<string, unknown>;
  readonly actionKind: A['kind'];
  readonly observationKind: O['kind'];
  /** The tool as SystemPromptEvent.tools lists it. */
  readonly definition: ToolDefinition;
  /** The LLM's arguments (a JSON string or an already parsed value) as an Action, or why not. */
  parseArguments(args: unknown): ParsedArguments<A>;
  execute(action: A, ctx?: ToolContext): Promise<O>;
  close(): Promise<void>;
}

/** Any of our tools, as the agent loop holds them. */
export type AnyTool = Tool<ToolAction, ToolObservation>;

type ActionSchema = z.ZodObject<{ kind: z.ZodLiteral<string> } & Record<string, z.ZodType>>;

/**
 * The LLM-facing JSON Schema of an Action: the event model's own field schemas, minus `kind`,
 * with a description on each field (the event model carries none).
 */
export function actionParameters<S extends ActionSchema>(
  schema: S,
  descriptions: { [K in Exclude<keyof S['shape'], 'kind'>]: string },
): Record<string, unknown> {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, field] of Object.entries(schema.shape)) {
    if (name === 'kind') continue;
    const description: unknown = (descriptions as Record<string, unknown>)[name];
    shape[name] = typeof description === 'string' ? field.describe(description) : field;
  }
  const { $schema: _, ...parameters } = z.toJSONSchema(z.strictObject(shape), { io: 'input' });
  return parameters;
}

/** Validates LLM arguments against an Action schema; errors name the tool and every bad field. */
export function parseActionArguments<S extends ActionSchema>(
  toolName: string,
  schema: S,
  args: unknown,
): ParsedArguments<z.output<S>> {
  const fail = (why: string) => ({ ok: false as const, error: `Invalid arguments for tool "${toolName}": ${why}` });
  let value = args;
  if (typeof args === 'string') {
    try {
      value = args.trim() === '' ? {} : JSON.parse(args);
    } catch {
      return fail('they are not valid JSON.');
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('expected a JSON object.');
  const result = schema.safeParse({ ...value, kind: schema.shape.kind.value });
  if (!result.success) return fail(`\n${z.prettifyError(result.error)}`);
  return { ok: true, action: result.data };
}

export function textContent(text: string) {
  return { type: 'text' as const, text, cache_prompt: false };
}

type ToolKind = Exclude<ToolDefinition['kind'], 'MCPToolDefinition'>;

export interface ToolSpec<S extends ActionSchema, O extends { kind: string }> {
  /** The function name the LLM calls. */
  name: string;
  kind: ToolKind;
  description: string;
  actionSchema: S;
  parameterDescriptions: { [K in Exclude<keyof S['shape'], 'kind'>]: string };
  observationKind: O['kind'];
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
  execute(action: z.output<S>, ctx: ToolContext): Promise<O>;
  close?(): Promise<void>;
}

/** A tool from its parts: its definition, parameters and argument parsing follow from the Action schema. */
export function defineTool<S extends ActionSchema, O extends { kind: string }>(spec: ToolSpec<S, O>): Tool<z.output<S> & { kind: string }, O> {
  const actionKind = spec.actionSchema.shape.kind.value as z.output<S>['kind'] & string;
  return {
    name: spec.name,
    description: spec.description,
    parameters: actionParameters(spec.actionSchema, spec.parameterDescriptions),
    actionKind,
    observationKind: spec.observationKind,
    definition: ToolDefinitionSchema.parse({
      kind: spec.kind,
      title: spec.name,
      description: spec.description,
      action_type: actionKind,
      observation_type: spec.observationKind,
      annotations: { title: spec.name, ...spec.annotations },
    }),
    // zod's output of a schema with a `kind` literal always carries that `kind`.
    parseArguments: (args) => parseActionArguments(spec.name, spec.actionSchema, args) as ParsedArguments<z.output<S> & { kind: string }>,
    execute: (action, ctx = {}) => spec.execute(action, ctx),
    close: spec.close ?? (async () => {}),
  };
}
