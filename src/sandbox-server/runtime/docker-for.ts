import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Docker from 'dockerode';
import { dockerConnectionFor } from '../net/engine-address.js';

/** dockerode for an engine's URL; tcp:// engines speak TLS with ca.pem, cert.pem and key.pem of `tlsCertDir` when it is set. */
export function dockerFor(row: { dockerUrl: string }, tlsCertDir: string | undefined): Docker {
  const tls = tlsCertDir !== undefined && row.dockerUrl.startsWith('tcp://');
  const certificates = tls
    ? { ca: readFileSync(join(tlsCertDir, 'ca.pem')), cert: readFileSync(join(tlsCertDir, 'cert.pem')), key: readFileSync(join(tlsCertDir, 'key.pem')) }
    : {};
  return new Docker({ ...dockerConnectionFor(row.dockerUrl, tls), ...certificates });
}
