import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import forge from 'node-forge';

/** An installation's CA: its certificate, which sandboxes trust, and its private key, which stays with the control plane. */
export interface CaMaterial {
  certPem: string;
  keyPem: string;
}

/** A leaf certificate for one host name, with the key it was issued to. */
export interface LeafCertificate {
  certPem: string;
  keyPem: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** Leaves are short-lived: minted on demand, and re-minted by a fresh process or after this. */
export const LEAF_VALIDITY_MS = 30 * DAY_MS;
const CA_VALIDITY_MS = 20 * 365 * DAY_MS;
/** Clocks inside sandboxes may run a little behind the host's. */
const BACKDATE_MS = 60 * 60 * 1000;

/**
 * RSA keys: node:crypto makes them (natively, in milliseconds); node-forge only builds and signs the
 * certificates, which node:crypto cannot do (its X509Certificate parses but never signs).
 */
function rsaKeyPair(): { privateKey: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey; keyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyPem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  return {
    keyPem,
    privateKey: forge.pki.privateKeyFromPem(keyPem),
    publicKey: forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString()),
  };
}

/** A positive 128-bit serial number in hex, as X.509 wants it. */
function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return bytes.toString('hex');
}

/** A new self-signed CA for the installation named `installationId`, valid for twenty years. */
export function createCaMaterial(installationId: string, now = new Date()): CaMaterial {
  const keys = rsaKeyPair();
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = serialNumber();
  cert.validity.notBefore = new Date(now.getTime() - BACKDATE_MS);
  cert.validity.notAfter = new Date(now.getTime() + CA_VALIDITY_MS);
  const subject = [
    { name: 'commonName', value: `sandbox-server egress CA ${installationId}`.slice(0, 64) },
    { name: 'organizationName', value: 'sandbox-server' },
  ];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.keyPem };
}

/**
 * Issues leaf certificates under an installation's CA, each for the one host a sandbox connected to.
 * All leaves share one key pair made when the issuer is: a sandbox learns nothing from it (the
 * private key never leaves this process), and minting then costs one signature.
 */
export class LeafIssuer {
  readonly #caCert: forge.pki.Certificate;
  readonly #caKey: forge.pki.rsa.PrivateKey;
  readonly #leafKeys = rsaKeyPair();

  constructor(ca: CaMaterial) {
    this.#caCert = forge.pki.certificateFromPem(ca.certPem);
    this.#caKey = forge.pki.privateKeyFromPem(ca.keyPem);
  }

  /** A certificate for `host` (a DNS name or an IP address), valid from an hour ago for LEAF_VALIDITY_MS. */
  issue(host: string, now = new Date()): LeafCertificate {
    const cert = forge.pki.createCertificate();
    cert.publicKey = this.#leafKeys.publicKey;
    cert.serialNumber = serialNumber();
    cert.validity.notBefore = new Date(now.getTime() - BACKDATE_MS);
    cert.validity.notAfter = new Date(now.getTime() + LEAF_VALIDITY_MS);
    cert.setSubject([{ name: 'commonName', value: host.slice(0, 64) }]);
    cert.setIssuer(this.#caCert.subject.attributes);
    const altName = isIP(host) ? { type: 7, ip: host } : { type: 2, value: host };
    cert.setExtensions([
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [altName] },
      { name: 'subjectKeyIdentifier' },
      // Strict verifiers (Python 3.13's default, OpenSSL's X509_STRICT) want the issuer named by key.
      { name: 'authorityKeyIdentifier', keyIdentifier: this.#caCert.generateSubjectKeyIdentifier().getBytes() },
    ]);
    cert.sign(this.#caKey, forge.md.sha256.create());
    return { certPem: forge.pki.certificateToPem(cert), keyPem: this.#leafKeys.keyPem };
  }
}
