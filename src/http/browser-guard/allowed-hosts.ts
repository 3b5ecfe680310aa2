/**
 * Which `Host` names a server answers. A browser tricked by DNS rebinding sends the attacker's
 * name (`Host: attacker.example`) to our address, so only names that cannot be rebound (loopback
 * names and addresses) and the ones an operator lists are served.
 */
export function isLoopbackName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return name === 'localhost' || name.endsWith('.localhost') || name === '::1' || /^127(\.\d{1,3}){3}$/.test(name);
}

/** `hostname` (no port) is loopback, or one of `allowed` (compared case-insensitively). */
export function isAllowedHost(hostname: string, allowed: readonly string[]): boolean {
  const name = hostname.toLowerCase();
  return isLoopbackName(name) || allowed.some((entry) => entry.toLowerCase() === name);
}

/** Parses a comma-separated setting (ALLOWED_HOSTS, CORS_ORIGINS) into its non-empty entries. */
export function commaSeparated(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
}
