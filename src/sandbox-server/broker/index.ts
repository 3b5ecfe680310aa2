import { readFile } from 'node:fs/promises';
import type { Logger } from '../../logger.js';
import type { Database } from '../db/client.js';
import type { ConnectHandler, EgressTarget } from '../egress/proxy.js';
import { ConfigError } from '../../errors/config-error.js';
import { brokeredIntercept } from './brokered-intercept.js';
import type { CaMaterial } from './certificate-authority.js';
import { LeafContexts } from './leaf-contexts.js';
import { SandboxSecrets } from './sandbox-secrets.js';
import { createTlsForwarder } from './tls-forwarder.js';

export interface Broker {
  /** The egress proxy's interceptConnect. */
  interceptConnect: (target: EgressTarget) => ConnectHandler;
  close(): void;
}

export interface BrokerOptions {
  db: Database;
  ca: CaMaterial;
  /** SANDBOX_EGRESS_CA_FILE. */
  extraCaFile?: string;
  log: Logger;
}

/** The brokered secrets' part of the egress proxy: the leaves of the installation's CA, the forwarder, and the secrets read per sandbox. */
export async function createBroker(options: BrokerOptions): Promise<Broker> {
  const upstreamCa = options.extraCaFile ? [await readCaFile(options.extraCaFile)] : [];
  const forwarder = createTlsForwarder({ contexts: new LeafContexts(options.ca), upstreamCa, log: options.log });
  const secrets = new SandboxSecrets(options.db);
  return {
    interceptConnect: brokeredIntercept({ secretsOf: (sandboxId) => secrets.of(sandboxId), forwarder, log: options.log }),
    close: () => forwarder.close(),
  };
}

async function readCaFile(file: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`SANDBOX_EGRESS_CA_FILE: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) throw new ConfigError(`SANDBOX_EGRESS_CA_FILE: ${file} holds no PEM certificate`);
  return text;
}
