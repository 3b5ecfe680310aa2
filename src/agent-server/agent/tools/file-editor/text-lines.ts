/**
 * Line arithmetic for the file editor. A file's lines are what `cat -n` numbers: a final newline
 * ends the last line rather than starting an empty one, and an empty file has no lines.
 */

export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (text.endsWith('\n')) lines.pop();
  return lines;
}

/** `text` with `insertion` as whole lines after line `afterLine` (0 = at the top). */
export function insertLines(text: string, afterLine: number, insertion: string): string {
  const lines = splitLines(text);
  lines.splice(afterLine, 0, ...insertion.split('\n'));
  const endsWithNewline = text === '' || text.endsWith('\n');
  return lines.join('\n') + (endsWithNewline ? '\n' : '');
}

/** The 1-based line of each non-overlapping occurrence of `needle`. */
export function occurrenceLines(text: string, needle: string): number[] {
  const lines: number[] = [];
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) {
    lines.push(lineOf(text, at));
  }
  return lines;
}

/** The 1-based line that holds character `index`. */
export function lineOf(text: string, index: number): number {
  let line = 1;
  for (let at = text.indexOf('\n'); at !== -1 && at < index; at = text.indexOf('\n', at + 1)) line += 1;
  return line;
}

export interface NumberedView {
  text: string;
  /** The last line shown: less than the last line asked for when the budget ran out. */
  lastLine: number;
}

/**
 * Lines `first`..`last` (1-based, inclusive) of `lines` numbered as by `cat -n`, stopping at whole
 * lines once `budget` characters are used. A first line longer than the budget is itself cut.
 */
export function numberLines(lines: string[], first: number, last: number, budget: number): NumberedView {
  const out: string[] = [];
  let used = 0;
  let lastLine = first - 1;
  for (let n = first; n <= last; n++) {
    const numbered = `${String(n).padStart(6)}\t${lines[n - 1] ?? ''}`;
    if (used + numbered.length > budget) {
      if (out.length === 0) {
        out.push(`${numbered.slice(0, budget)} [... rest of line ${n} cut]`);
        lastLine = n;
      }
      break;
    }
    out.push(numbered);
    used += numbered.length + 1;
    lastLine = n;
  }
  return { text: out.join('\n'), lastLine };
}
