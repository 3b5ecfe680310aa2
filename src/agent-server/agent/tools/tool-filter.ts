/**
 * `filter_tools_regex`: OpenHands keeps the tools whose name Python's `re.match` accepts, i.e. a
 * match anchored at the start of the name only. Python's named groups and leading inline flags are
 * spelled the JavaScript way; anything else of the pattern is taken as it is.
 */

export type ToolFilter = { ok: true; test(name: string): boolean } | { ok: false; error: string };

export function compileToolFilter(pattern: string): ToolFilter {
  let source = pattern;
  let flags = '';
  const inline = /^\(\?([aiLmsux]+)\)/.exec(source);
  if (inline) {
    flags = [...new Set(inline[1]?.split('') ?? [])].filter((flag) => 'ims'.includes(flag)).join('');
    source = source.slice(inline[0].length);
  }
  source = source.replaceAll('(?P<', '(?<').replace(/\(\?P=(\w+)\)/g, '\\k<$1>');
  try {
    const regex = new RegExp(`^(?:${source})`, flags);
    return { ok: true, test: (name) => regex.test(name) };
  } catch (error) {
    return { ok: false, error: `Invalid regular expression: ${(error as Error).message}` };
  }
}
