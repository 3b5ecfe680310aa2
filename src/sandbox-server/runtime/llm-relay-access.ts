import { EVERY_SANDBOX_BRIDGE } from './sandbox-network.js';
import { type RunCommand, runCommand } from './run-command.js';

/**
 * How a sandbox reaches the control plane's LLM relay, and nothing else of the host: every
 * container gets this name for its engine's host-gateway address (the host, as Docker's default
 * bridge reaches it), and one firewall rule lets connections from sandbox bridges to the relay's
 * port through the rule that otherwise keeps every sandbox from the host (firewall.ts). It holds
 * for `internet` and `none` sandboxes alike, under runc and runsc: both send the packet over the
 * sandbox's own bridge to the host, where the rule sees it. A unix socket mounted into the
 * container would need no rule, but gVisor refuses connections to host sockets unless the runtime
 * is registered with --host-uds, which an engine's owner would have to do.
 */
export const LLM_RELAY_HOSTNAME = 'llm-relay.sandbox.internal';

/** The container's /etc/hosts entry for the relay (Docker's ExtraHosts form). */
export const LLM_RELAY_EXTRA_HOST = `${LLM_RELAY_HOSTNAME}:host-gateway`;

const COMMENT = 'sandbox-server: sandboxes reach the LLM relay';

/** The INPUT rule, as iptables' arguments after the chain. */
function ruleFor(port: number): string[] {
  return ['-i', EVERY_SANDBOX_BRIDGE, '-p', 'tcp', '--dport', String(port), '-m', 'comment', '--comment', COMMENT, '-j', 'ACCEPT'];
}

/**
 * Lets sandboxes connect to the relay's port, ahead of the rule that drops their connections to the
 * host. Resolves to null once it is in place, or to why not (the caller says so once).
 */
export async function openLlmRelayPort(port: number, run: RunCommand = runCommand): Promise<string | null> {
  const rule = ruleFor(port);
  try {
    const present = await run('iptables', ['-w', '-C', 'INPUT', ...rule]).then(
      () => true,
      () => false,
    );
    if (!present) await run('iptables', ['-w', '-I', 'INPUT', '1', ...rule]);
    return null;
  } catch (error) {
    return `iptables failed: ${(error as { stderr?: string }).stderr?.trim() || (error as Error).message}`;
  }
}

/**
 * Takes the rule away when the relay stops: only one process can listen on a port, so no other
 * relay needs it, and a port nothing listens on stays closed to sandboxes.
 */
export async function closeLlmRelayPort(port: number, run: RunCommand = runCommand): Promise<void> {
  await run('iptables', ['-w', '-D', 'INPUT', ...ruleFor(port)]).catch(() => undefined);
}
