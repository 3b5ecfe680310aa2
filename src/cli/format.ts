/** Pure text layout for human output: aligned tables, label/value lists, times, one-line texts. */

/** Columns separated by two spaces and padded to their widest cell; the last column is not padded. */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** `label  value` lines with the values aligned. */
export function formatFields(fields: readonly (readonly [string, string])[]): string {
  const width = Math.max(...fields.map(([label]) => label.length));
  return fields.map(([label, value]) => `${label.padEnd(width)}  ${value}`.trimEnd()).join('\n');
}

/**
 * `2026-11-23T13:42:48.123+02:00` -> `2026-11-23 11:42:48` (UTC). A timestamp without a zone (as
 * OpenHands' Python writes them) is shown as written; text that is no date stays as it is.
 */
export function formatTime(timestamp: string | undefined | null): string {
  if (!timestamp) return '';
  const millis = Date.parse(timestamp);
  if (Number.isNaN(millis)) return timestamp;
  if (!/(Z|[+-]\d\d:?\d\d)$/i.test(timestamp)) return timestamp.slice(0, 19).replace('T', ' ');
  return new Date(millis).toISOString().slice(0, 19).replace('T', ' ');
}

/** Whole seconds as `42s` or `3m07s`. */
export function formatElapsed(millis: number): string {
  const seconds = Math.floor(millis / 1000);
  if (seconds < 60) return `${seconds}s`;
  return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
}

/** Whitespace collapsed to single spaces, cut to `max` characters with an ellipsis. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/** `null`/missing shown as `-` in tables, so empty cells do not shift a reader's eye. */
export function orDash(value: string | number | null | undefined): string {
  return value === null || value === undefined || value === '' ? '-' : String(value);
}

/** Bytes as `512 B`, `3.4 KB`, `12.0 MB`, `1.2 GB` (powers of 1024). */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}
