import type { Duplex } from 'node:stream';
import type { Logger } from '../../logger.js';
import { pipeTunnel } from '../egress/pipe-tunnel.js';
import type { ConnectHandler, EgressTarget } from '../egress/proxy.js';
import { secretsForHost, type BrokeredSecret } from './brokered-secret.js';
import type { TlsForwarder } from './tls-forwarder.js';

export interface BrokeredInterceptOptions {
  /** A sandbox's brokered secrets (SandboxSecrets.of). */
  secretsOf: (sandboxId: string) => Promise<BrokeredSecret[]>;
  forwarder: TlsForwarder;
  log: Logger;
}

/**
 * The egress proxy's interceptConnect: an allowed tunnel to a host one of the sandbox's brokered
 * secrets is for goes through the TLS forwarder (its placeholders swapped there); any other stays
 * a byte pipe, its TLS the sandbox's own end to end. Which secrets a sandbox has is read from the
 * database (cached), so the tunnel waits for that first.
 */
export function brokeredIntercept(options: BrokeredInterceptOptions): (target: EgressTarget) => ConnectHandler {
  return () => (client, target) => {
    client.pause();
    options.secretsOf(target.sandboxId).then(
      (secrets) => {
        const meant = secretsForHost(secrets, target.host);
        if (meant.length === 0) return pipeTunnel(client, target);
        options.forwarder.handle(client, { host: target.host, port: target.port, address: target.address, secrets: meant, sandboxId: target.sandboxId });
        client.resume();
      },
      (error: unknown) => {
        options.log.warn({ sandboxId: target.sandboxId, err: error instanceof Error ? error.message : String(error) }, 'brokered secrets could not be read; connection dropped');
        client.destroy();
      },
    );
  };
}
