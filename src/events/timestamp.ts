/**
 * Event timestamps are ISO 8601 strings. OpenHands writes Python's naive `isoformat()` (no offset,
 * microseconds), which JavaScript would read as local time; we read a missing offset as UTC so an
 * imported history sorts and filters the same on every machine.
 */
const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** Epoch milliseconds of an ISO 8601 date or date-time, or NaN when it is not one. */
export function timestampMillis(value: string): number {
  const m = ISO_DATE_TIME.exec(value.trim());
  if (!m) return Number.NaN;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone] = m;
  if (Number(mo) < 1 || Number(mo) > 12 || Number(d) < 1 || Number(d) > 31) return Number.NaN;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 60) return Number.NaN;
  const ms = frac ? Number(frac.padEnd(3, '0').slice(0, 3)) : 0;
  const base = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms);
  if (Number.isNaN(base)) return Number.NaN;
  if (!zone || zone.toUpperCase() === 'Z') return base;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const offsetMinutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4));
  return base - sign * offsetMinutes * 60_000;
}

export function isTimestamp(value: string): boolean {
  return !Number.isNaN(timestampMillis(value));
}

/** Now, as the ISO string new events carry. */
export function nowTimestamp(): string {
  return new Date().toISOString();
}
