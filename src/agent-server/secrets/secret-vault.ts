/**
 * The secrets of one conversation: their values for the agent's shell, and the masking of every
 * value ever handed out, wherever text leaves the shell (events, so what the LLM is sent, the
 * stream, downloads and the trajectory; and this process's log lines).
 *
 * Static values are known at once. A LookupSecret is fetched when the shell first starts and again
 * before each command that names it (OpenHands' rule, case-insensitive), so a rotating token is
 * fresh where it is used; a failed fetch keeps the last value and is logged without it. Every value
 * stays masked after it is replaced: output printed earlier may still hold it.
 */
import { SecretValueSchema, type SecretSource } from '../../contracts/agent-server/secrets.js';
import { hideInLogs, logger } from '../../logger.js';
import { maskableValues, maskJson, maskText } from './mask-values.js';

/** How long a LookupSecret's URL may take to answer. */
const LOOKUP_TIMEOUT_MS = 30_000;

/** Names a shell can export; other names are masked but not set. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface SecretInfo {
  name: string;
  description: string | null;
}

export interface SecretVault {
  /** Adds or replaces secrets (as sent: strings or secret sources); unreadable entries are skipped. */
  update(secrets: Record<string, unknown>): void;
  /** The secrets' names and descriptions, for the system prompt. */
  infos(): SecretInfo[];
  /** The variables the shell should hold before running `command`. */
  environment(command: string): Promise<Record<string, string>>;
  maskText(text: string): string;
  /** A copy of a JSON value (an event) with every known value hidden in its strings. */
  mask<T>(value: T): T;
}

/** `alsoMasked`: values masked from the start without being the conversation's (the spec's secret initial_env). */
export function createSecretVault(secrets: Record<string, unknown>, alsoMasked: readonly string[] = [], fetchSecret: typeof fetch = fetch): SecretVault {
  const sources = new Map<string, SecretSource>();
  const current = new Map<string, string>();
  const handedOut = new Set<string>();
  /** Lookups tried at least once: one that fails is tried again only by a command naming it. */
  const tried = new Set<string>();
  let masked: string[] = [];

  function remember(name: string, value: string): void {
    current.set(name, value);
    if (handedOut.has(value)) return;
    handedOut.add(value);
    hideInLogs(value);
    masked = maskableValues(handedOut);
  }

  async function lookUp(name: string, source: Extract<SecretSource, { kind: 'LookupSecret' }>): Promise<void> {
    tried.add(name);
    try {
      const response = await fetchSecret(source.url, { headers: source.headers, signal: AbortSignal.timeout(LOOKUP_TIMEOUT_MS) });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      remember(name, await response.text());
    } catch (error) {
      logger.warn({ secret: name, reason: (error as Error).message }, 'looking up a secret failed; its last value is kept');
    }
  }

  for (const value of alsoMasked) {
    handedOut.add(value);
    hideInLogs(value);
  }
  masked = maskableValues(handedOut);

  const vault: SecretVault = {
    update(next) {
      for (const [name, raw] of Object.entries(next)) {
        const parsed = SecretValueSchema.safeParse(raw);
        if (!parsed.success) {
          logger.warn({ secret: name }, 'skipping a secret of a kind this server does not know');
          continue;
        }
        const source: SecretSource = typeof parsed.data === 'string' ? { kind: 'StaticSecret', value: parsed.data } : parsed.data;
        sources.set(name, source);
        if (source.kind === 'StaticSecret') {
          if (source.value) remember(name, source.value);
          else current.delete(name);
        }
      }
    },
    infos: () => [...sources].map(([name, source]) => ({ name, description: source.description ?? null })),
    async environment(command) {
      const lowered = command.toLowerCase();
      await Promise.all(
        [...sources].flatMap(([name, source]) =>
          source.kind === 'LookupSecret' && (!tried.has(name) || lowered.includes(name.toLowerCase())) ? [lookUp(name, source)] : [],
        ),
      );
      return Object.fromEntries([...current].filter(([name]) => ENV_NAME.test(name)));
    },
    maskText: (text) => maskText(text, masked),
    mask: (value) => maskJson(value, masked),
  };
  vault.update(secrets);
  return vault;
}
