/**
 * The tools one conversation's agent is offered, from its `agent` settings as OpenHands reads them:
 * `tools` (specs `{name, params}`; OpenHands' default set when absent), then `filter_tools_regex`
 * over their names, then the built-ins of `include_default_tools` (finish and think by default),
 * which the filter does not touch. `validateAgentTools` refuses what this would fail on, before a
 * conversation is created with it.
 */
import { invalidValuesFromZod, type InvalidValue } from '../../../errors/index.js';
import { catalogEntry, DEFAULT_BUILT_IN_NAMES, DEFAULT_TOOL_NAMES, TOOL_CATALOG, type CatalogEntry, type ToolEnvironment } from './catalog.js';
import { compileToolFilter } from './tool-filter.js';
import type { AnyTool } from './tool.js';

export interface ToolSpec {
  name: string;
  params?: Record<string, unknown>;
}

/** The part of an agent's settings that chooses its tools. */
export interface ToolChoice {
  tools?: readonly ToolSpec[] | null;
  filter_tools_regex?: string | null;
  include_default_tools?: readonly string[] | null;
}

/** The names accepted in `agent.tools`, as GET /api/tools/ lists them (OpenHands lists no built-ins). */
export function selectableToolNames(): string[] {
  return TOOL_CATALOG.filter((entry) => !entry.builtIn).map((entry) => entry.name);
}

/** Every problem of the choice, located under `agent` in the request body; empty when it is good. */
export function validateAgentTools(choice: ToolChoice): InvalidValue[] {
  const problems: InvalidValue[] = [];
  const known = [...TOOL_CATALOG.map((entry) => entry.className), ...selectableToolNames()].join(', ');
  (choice.tools ?? []).forEach((spec, index) => {
    const entry = catalogEntry(spec.name);
    if (entry === undefined) {
      problems.push(invalid(['tools', index, 'name'], `Unknown tool '${spec.name}'. This server runs: ${known}`, 'value_error'));
      return;
    }
    const params = entry.params.safeParse(spec.params ?? {});
    if (!params.success) problems.push(...invalidValuesFromZod(params.error, 'body', ['agent', 'tools', index, 'params']));
  });
  (choice.include_default_tools ?? []).forEach((name, index) => {
    if (!catalogEntry(name)?.builtIn) {
      problems.push(invalid(['include_default_tools', index], `Unknown built-in tool '${name}'. Expected one of: ${DEFAULT_BUILT_IN_NAMES.join(', ')}`, 'value_error'));
    }
  });
  if (choice.filter_tools_regex) {
    const filter = compileToolFilter(choice.filter_tools_regex);
    if (!filter.ok) problems.push(invalid(['filter_tools_regex'], filter.error, 'value_error'));
  }
  return problems;
}

function invalid(field: (string | number)[], msg: string, type: string): InvalidValue {
  return { in: 'body', field: ['agent', ...field], msg, type };
}

/**
 * Makes the conversation's tools, in the order the LLM sees them; a tool chosen twice (by both of
 * its names, or in `tools` and as a built-in) is made once. Throws on a choice that
 * validateAgentTools refuses; when making a tool fails, the ones already made are closed.
 */
export async function createConversationTools(choice: ToolChoice, env: ToolEnvironment): Promise<AnyTool[]> {
  const filter = choice.filter_tools_regex ? compileToolFilter(choice.filter_tools_regex) : null;
  if (filter && !filter.ok) throw new Error(filter.error);
  const chosen = entriesOf(choice.tools ?? DEFAULT_TOOL_NAMES.map((name) => ({ name })));
  const builtIns = entriesOf((choice.include_default_tools ?? DEFAULT_BUILT_IN_NAMES).map((name) => ({ name })));
  const made: AnyTool[] = [];
  try {
    for (const { entry, params } of chosen) made.push(...(await entry.create(env, params)));
    const dropped = filter ? made.filter((tool) => !filter.test(tool.name)) : [];
    await closeTools(dropped);
    const tools = made.filter((tool) => !dropped.includes(tool));
    for (const { entry, params } of builtIns) {
      if (!chosen.some((c) => c.entry === entry)) tools.push(...(await entry.create(env, params)));
    }
    return tools;
  } catch (error) {
    await closeTools(made);
    throw error;
  }
}

function entriesOf(specs: readonly ToolSpec[]): { entry: CatalogEntry; params: Record<string, unknown> }[] {
  const result: { entry: CatalogEntry; params: Record<string, unknown> }[] = [];
  for (const spec of specs) {
    const entry = catalogEntry(spec.name);
    if (entry === undefined) throw new Error(`Unknown tool '${spec.name}'`);
    if (!result.some((r) => r.entry === entry)) result.push({ entry, params: entry.params.parse(spec.params ?? {}) });
  }
  return result;
}

/** Closes every tool: ends the terminal's shell and everything it still runs. */
export async function closeTools(tools: readonly AnyTool[]): Promise<void> {
  await Promise.all(tools.map((tool) => tool.close()));
}
