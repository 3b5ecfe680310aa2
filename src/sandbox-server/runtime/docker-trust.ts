import { rootCertificates } from 'node:tls';
import type Docker from 'dockerode';
import { statusCodeOf, toRuntimeError } from './docker-errors.js';
import { tarOf, type TarEntry } from './tar.js';

/** Where a sandbox finds the installation's CA, and a bundle of it with the public roots. */
export const TRUST_DIR = '/etc/sandbox-server-ca';
export const TRUSTED_CA_FILE = `${TRUST_DIR}/installation-ca.pem`;
export const TRUST_BUNDLE_FILE = `${TRUST_DIR}/ca-bundle.pem`;
/** Where Debian's update-ca-certificates looks for local CAs, so that a rebuilt system store keeps ours. */
const LOCAL_CA_FILE = '/usr/local/share/ca-certificates/sandbox-server-installation-ca.crt';

/** The system stores of the common distributions (Debian and Ubuntu, Fedora and RHEL, Alpine): each one the image has gets the CA added. */
const SYSTEM_BUNDLES = ['/etc/ssl/certs/ca-certificates.crt', '/etc/pki/tls/certs/ca-bundle.crt', '/etc/ssl/cert.pem'];

/**
 * What points TLS clients at the bundle or the CA: Node (which keeps its own roots and adds
 * NODE_EXTRA_CA_CERTS), OpenSSL and what reads its variable (Python's ssl, Ruby, curl's OpenSSL
 * builds), Python's requests and pip, curl, and git.
 */
export function trustEnv(): Record<string, string> {
  return {
    NODE_EXTRA_CA_CERTS: TRUSTED_CA_FILE,
    SSL_CERT_FILE: TRUST_BUNDLE_FILE,
    REQUESTS_CA_BUNDLE: TRUST_BUNDLE_FILE,
    CURL_CA_BUNDLE: TRUST_BUNDLE_FILE,
    GIT_SSL_CAINFO: TRUST_BUNDLE_FILE,
  };
}

/**
 * Installs the installation's CA in a created container before it starts: the CA file, a bundle of
 * the image's system roots (Node's own when the image has none) with the CA, the CA added to each
 * system store the image has, and to Debian's local CAs. Only the certificate: its key stays home.
 */
export async function installTrustedCa(container: Docker.Container, caPem: string, image: { id: string | undefined; files: Map<string, Promise<Buffer | undefined>> }): Promise<void> {
  const ca = caPem.endsWith('\n') ? caPem : `${caPem}\n`;
  const stores = await Promise.all(SYSTEM_BUNDLES.map(async (path) => ({ path, content: await imageFileOf(container, path, image) })));
  const found = stores.filter((store): store is { path: string; content: Buffer } => store.content !== undefined);
  const roots = found[0]?.content.toString('utf8') ?? `${rootCertificates.join('\n')}\n`;
  const withCa = (bundle: string) => Buffer.from(`${bundle.endsWith('\n') || bundle === '' ? bundle : `${bundle}\n`}${ca}`);
  const entries: TarEntry[] = [
    { path: `${TRUST_DIR.slice(1)}/`, mode: 0o755 },
    { path: TRUSTED_CA_FILE.slice(1), mode: 0o644, content: Buffer.from(ca) },
    { path: TRUST_BUNDLE_FILE.slice(1), mode: 0o644, content: withCa(roots) },
    ...found.map((store) => ({ path: store.path.slice(1), mode: 0o644, content: withCa(store.content.toString('utf8')) })),
  ];
  if (found.some((store) => store.path === SYSTEM_BUNDLES[0])) entries.push({ path: LOCAL_CA_FILE.slice(1), mode: 0o644, content: Buffer.from(ca) });
  try {
    await container.putArchive(tarOf(entries), { path: '/' });
  } catch (error) {
    await container.remove({ force: true }).catch(() => undefined);
    throw toRuntimeError(error, 'install the installation CA');
  }
}

/**
 * The file as the image has it: read from the container created from it, once per image id (an
 * id's content never changes); a failed read is not kept.
 */
function imageFileOf(container: Docker.Container, path: string, image: { id: string | undefined; files: Map<string, Promise<Buffer | undefined>> }): Promise<Buffer | undefined> {
  if (image.id === undefined) return regularFileOf(container, path);
  const key = `${image.id} ${path}`;
  const known = image.files.get(key);
  if (known) return known;
  const reading = regularFileOf(container, path);
  image.files.set(key, reading);
  reading.catch(() => image.files.delete(key));
  return reading;
}

/** The content of a regular file in the container (not a link, which its target's store covers); undefined when there is none. */
async function regularFileOf(container: Docker.Container, path: string): Promise<Buffer | undefined> {
  let archive: Buffer;
  try {
    const stream = await container.getArchive({ path });
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    archive = Buffer.concat(chunks);
  } catch (error) {
    if (statusCodeOf(error) === 404) return undefined;
    throw toRuntimeError(error, 'read the image CA store');
  }
  return firstRegularFile(archive);
}

/** The first entry of a tar archive when it is a regular file (past any PAX headers). */
export function firstRegularFile(archive: Buffer): Buffer | undefined {
  let offset = 0;
  while (offset + 512 <= archive.length) {
    const type = String.fromCharCode(archive[offset + 156] ?? 0);
    const size = Number.parseInt(archive.subarray(offset + 124, offset + 136).toString('latin1').replace(/\0.*$/s, '').trim() || '0', 8);
    if (!Number.isFinite(size)) return undefined;
    const content = archive.subarray(offset + 512, offset + 512 + size);
    if (type === '0' || type === '\0') return content;
    if (type !== 'x' && type !== 'g') return undefined;
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return undefined;
}
