/**
 * How engines are reached: DOCKER_ENGINES and dockerode's connection options. Pure.
 */
import { ADVERTISE_HOST_PATTERN, DOCKER_URL_PATTERN, ENGINE_NAME_PATTERN } from '../../contracts/engine.js';

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
    if (names.has(name)) throw new Error(`engine ${name} is named twice`);
    names.add(name);
    return { name, dockerUrl, advertiseHost };
  });
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
