/**
 * The Docker benchmarks' fixture: an agent-server image built for one run under a fresh instance id,
 * and removal of everything the run left behind under that id's label.
 */
import { randomBytes } from 'node:crypto';
import type Docker from 'dockerode';
import type { z } from 'zod';
import { buildAgentServerImage } from '../src/sandbox-server/image/index.js';
import { LABEL_INSTANCE } from '../src/sandbox-server/runtime/index.js';
import { until } from './measure.js';

export interface BenchImage {
  instanceId: string;
  image: string;
  baseImage: string;
}

/** Builds the agent-server image FROM SANDBOX_BASE_IMAGE (default sandbox-base:local), tagged with a fresh `<prefix>-<hex>` instance id. */
export async function buildBenchImage(docker: Docker, prefix: string): Promise<BenchImage> {
  const instanceId = `${prefix}-${randomBytes(4).toString('hex')}`;
  const image = `sandbox-server-bench/agent-server:${instanceId}`;
  const baseImage = process.env.SANDBOX_BASE_IMAGE ?? 'sandbox-base:local';
  console.log(`building ${image} FROM ${baseImage} ...`);
  await buildAgentServerImage({ docker, baseImage, tag: image });
  return { instanceId, image, baseImage };
}

/**
 * Everything a run left behind under its instance label: removeSandboxResources, then the images
 * labelled with the instance (snapshots), then the bench image itself.
 */
export async function removeBenchResources(docker: Docker, { instanceId, image }: BenchImage): Promise<void> {
  await removeSandboxResources(docker, instanceId);
  const filters = { label: [`${LABEL_INSTANCE}=${instanceId}`] };
  for (const i of await docker.listImages({ filters })) await docker.getImage(i.Id).remove({ force: true }).catch(() => undefined);
  await docker.getImage(image).remove({ force: true }).catch(() => undefined);
}

/**
 * The sandboxes' containers first (they hold volumes and networks), then the volumes and networks
 * labelled with the instance; the images stay, for the next part of a run. Best effort past the
 * containers, so a leftover does not hide the error that ended the run.
 */
export async function removeSandboxResources(docker: Docker, instanceId: string): Promise<void> {
  const filters = { label: [`${LABEL_INSTANCE}=${instanceId}`] };
  for (const c of await docker.listContainers({ all: true, filters })) await docker.getContainer(c.Id).remove({ force: true, v: true });
  for (const v of (await docker.listVolumes({ filters })).Volumes ?? []) await docker.getVolume(v.Name).remove().catch(() => undefined);
  for (const n of await docker.listNetworks({ filters })) await docker.getNetwork(n.Id).remove().catch(() => undefined);
}

/** The session key of floor containers, which the floors send to the agent-server. */
export const FLOOR_KEY = 'bench-floor-key';

/**
 * A floor container (`docker run` without us): the bench image with the agent-server's port
 * published on a free loopback port, labelled for removeBenchResources. Created, not started.
 */
export function createFloorContainer(docker: Docker, { instanceId, image }: BenchImage, runtime: string): Promise<Docker.Container> {
  return docker.createContainer({
    Image: image,
    // Without a session key the agent-server only listens on loopback, unreachable from the host.
    Env: [`OH_SESSION_API_KEYS_0=${FLOOR_KEY}`],
    Labels: { [LABEL_INSTANCE]: instanceId },
    ExposedPorts: { '8000/tcp': {} },
    HostConfig: { PortBindings: { '8000/tcp': [{ HostIp: '127.0.0.1', HostPort: '' }] }, Runtime: runtime },
  });
}

/** How the benchmarks wait: asking every 5 ms, for at most `timeoutMs`. */
export const waitFor = (timeoutMs: number) => ({ pollMs: 5, timeoutMs });

/**
 * Time to interactive, ours: runs `echo ok` through the control plane's proxy, asking at once and
 * again until the sandbox answers (the proxy itself waits for a starting sandbox); throws unless it
 * printed `ok`.
 */
export async function echoThroughProxy(serverUrl: string, sandboxId: string, timeoutMs: number): Promise<void> {
  let output: string | undefined;
  await until(async () => {
    const response = await fetch(`${serverUrl}/api/v1/sandboxes/${sandboxId}/agent/api/bash/execute_bash_command`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ command: 'echo ok', timeout: 10 }),
    });
    if (response.ok) output = ((await response.json()) as { stdout: string }).stdout;
    return response.ok;
  }, waitFor(timeoutMs));
  if (output !== 'ok\n') throw new Error(`unexpected output ${JSON.stringify(output)}`);
}

/**
 * Time to interactive, the floor: whether `echo ok` ran on a floor container's agent-server at
 * `baseUrl`, asked directly; false while it does not answer yet.
 */
export async function echoDirect(baseUrl: string): Promise<boolean> {
  try {
    const response = await fetch(`${baseUrl}/api/bash/execute_bash_command`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Session-API-Key': FLOOR_KEY },
      body: JSON.stringify({ command: 'echo ok', timeout: 10 }),
      signal: AbortSignal.timeout(5_000),
    });
    return response.ok && ((await response.json()) as { stdout: string }).stdout === 'ok\n';
  } catch {
    return false;
  }
}

/**
 * Calls a control plane the bench started and reads the answer as `schema`: a refusal or an answer
 * of another shape stops the bench, whose figures would otherwise time something else.
 */
export function controlPlaneApi(serverUrl: string, headers: Record<string, string> = {}) {
  return async <T>(schema: z.ZodType<T>, method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${serverUrl}${path}`, {
      method,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return schema.parse(await response.json());
  };
}
