/**
 * How engines are reached: DOCKER_ENGINES and dockerode's connection options. Pure.
 */
import { isIP } from 'node:net';
import { ADVERTISE_HOST_PATTERN, DOCKER_URL_PATTERN, ENGINE_NAME_PATTERN } from '../../contracts/engine.js';
import { type AddressKind, addressKind } from './address-kind.js';

/** The engine `name` reached at `dockerUrl`, publishing its sandboxes' ports on `advertiseHost`. */
export interface EngineAddress {
  name: string;
  dockerUrl: string;
  advertiseHost: string;
}

/** Docker's own default: the socket, unless DOCKER_HOST names another engine. */
export function defaultDockerUrl(env: NodeJS.ProcessEnv): string {
  return env.DOCKER_HOST || 'unix:///var/run/docker.sock';
}

/**
 * DOCKER_ENGINES: `name=docker_url@advertise_host,...`. The advertise host follows the last `@`, so
 * an ssh:// URL may carry a user. Throws an Error naming the first bad entry.
 */
export function parseDockerEngines(value: string): EngineAddress[] {
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  const names = new Set<string>();
  return entries.map((entry) => {
    const match = /^([^=]+)=(.+)@([^@]+)$/.exec(entry);
    if (!match) throw new Error(`"${entry}" is not name=docker_url@advertise_host`);
    const [, name = '', dockerUrl = '', advertiseHost = ''] = match;
    if (!ENGINE_NAME_PATTERN.test(name)) throw new Error(`engine name "${name}" must be lower-case letters, digits and dashes`);
    if (!DOCKER_URL_PATTERN.test(dockerUrl)) throw new Error(`engine ${name}: "${dockerUrl}" is not a unix://, tcp://host:port or ssh:// URL`);
    if (!ADVERTISE_HOST_PATTERN.test(advertiseHost)) throw new Error(`engine ${name}: "${advertiseHost}" is not a host name or address`);
    const [problem] = engineAddressProblems(dockerUrl, advertiseHost);
    if (problem) throw new Error(`engine ${name}: ${problem.field} ${problem.msg}`);
    if (names.has(name)) throw new Error(`engine ${name} is named twice`);
    names.add(name);
    return { name, dockerUrl, advertiseHost };
  });
}

/** Where no engine is, nor a sandbox's published port: the proxy would send keys and requests there. */
const UNUSABLE_KINDS: ReadonlySet<AddressKind> = new Set(['unspecified', 'link-local', 'multicast']);

export interface EngineAddressProblem {
  field: 'docker_url' | 'advertise_host';
  msg: string;
}

/**
 * What is wrong with an engine's address beyond its shape (DOCKER_URL_PATTERN,
 * ADVERTISE_HOST_PATTERN): a port outside 1-65535, which no connection can use (dockerode would
 * throw on every call, and its sandboxes would wait forever), or a host that is unspecified,
 * link-local (169.254.169.254 is a cloud's metadata service) or multicast.
 */
export function engineAddressProblems(dockerUrl: string, advertiseHost: string): EngineAddressProblem[] {
  const problems: EngineAddressProblem[] = [];
  const url = URL.canParse(dockerUrl) ? new URL(dockerUrl) : undefined;
  const port = /^(?:tcp|ssh):\/\/[^/]*:(\d+)$/.exec(dockerUrl)?.[1];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65_535)) problems.push({ field: 'docker_url', msg: `port ${port} is not between 1 and 65535` });
  const engineHost = url && url.protocol !== 'unix:' ? unbracketed(url.hostname) : undefined;
  const engineKind = engineHost === undefined ? undefined : ipKind(engineHost);
  if (engineKind && UNUSABLE_KINDS.has(engineKind)) problems.push({ field: 'docker_url', msg: `host ${engineHost} is ${engineKind}` });
  const advertiseKind = ipKind(unbracketed(advertiseHost));
  if (advertiseKind && UNUSABLE_KINDS.has(advertiseKind)) problems.push({ field: 'advertise_host', msg: `${advertiseHost} is ${advertiseKind}` });
  return problems;
}

function unbracketed(host: string): string {
  return host.replace(/^\[(.*)\]$/, '$1');
}

function ipKind(host: string): AddressKind | undefined {
  return isIP(host) === 0 ? undefined : addressKind(host);
}

/** What dockerode needs to reach `dockerUrl`; TLS files (ca.pem, cert.pem, key.pem) are the caller's to read. */
export type DockerConnection =
  | { socketPath: string }
  | { protocol: 'http' | 'https'; host: string; port: number }
  | { protocol: 'ssh'; host: string; port?: number; username?: string };

export function dockerConnectionFor(dockerUrl: string, tls: boolean): DockerConnection {
  const url = new URL(dockerUrl);
  if (url.protocol === 'unix:') return { socketPath: url.pathname };
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (url.protocol === 'tcp:') return { protocol: tls ? 'https' : 'http', host, port: Number(url.port) };
  if (url.protocol === 'ssh:') {
    return { protocol: 'ssh', host, ...(url.port ? { port: Number(url.port) } : {}), ...(url.username ? { username: decodeURIComponent(url.username) } : {}) };
  }
  throw new Error(`unsupported Docker URL ${dockerUrl}`);
}
