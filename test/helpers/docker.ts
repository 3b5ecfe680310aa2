import { randomBytes, randomUUID } from 'node:crypto';
import Docker from 'dockerode';
import { demultiplexLogs } from '../../src/sandbox-server/runtime/docker-logs.js';
import { type ContainerRequest, LABEL_INSTANCE } from '../../src/sandbox-server/runtime/runtime.js';

/** The offline base image CI builds (node at /usr/local/bin/node); also the image of test sandboxes. */
export const TEST_BASE_IMAGE = process.env.SANDBOX_BASE_IMAGE ?? 'sandbox-base:local';

/**
 * A stand-in agent-server for runtime tests: answers GET /alive on 8000 and starts in a blink, so
 * tests exercise the engine and the reconciler rather than the agent-server.
 */
export const ALIVE_SERVER_COMMAND = [
  'node',
  '-e',
  "require('http').createServer((q, s) => { s.writeHead(q.url === '/alive' ? 200 : 404, { 'content-type': 'application/json' }); s.end(q.url === '/alive' ? '{\"status\":\"ok\"}' : '{}'); }).listen(8000, '0.0.0.0')",
];

/**
 * A request for a sandbox container of the base image running ALIVE_SERVER_COMMAND, without limits,
 * online, its volume and network named for a fresh sandbox id; `overrides` set what a test looks at.
 */
export function containerRequest(overrides: Partial<ContainerRequest> = {}): ContainerRequest {
  const sandboxId = randomUUID();
  return {
    sandboxId,
    specId: 'spec-test',
    image: TEST_BASE_IMAGE,
    command: ALIVE_SERVER_COMMAND,
    env: {},
    initialEnv: {},
    workingDir: '/workspace',
    exposedPorts: [{ name: 'AGENT_SERVER', container_port: 8000 }],
    cpus: null,
    memoryMb: null,
    pidsLimit: null,
    runtime: 'runc',
    dataVolume: { name: `sandbox-server-data-${sandboxId}`, mountPath: '/data' },
    network: { name: `sandbox-server-net-${sandboxId}`, access: 'internet' },
    ...overrides,
  };
}

/**
 * The engine, or undefined when it cannot be reached outside CI (with a loud warning, so a skipped
 * integration suite is noticed). Under CI=true an unreachable engine fails the run.
 */
export async function connectDocker(): Promise<Docker | undefined> {
  const docker = new Docker();
  try {
    await docker.ping();
    return docker;
  } catch (error) {
    if (process.env.CI === 'true') throw new Error(`Docker is not reachable (CI=true): ${String(error)}`);
    console.warn(`\n!!! Docker is not reachable (${String(error)}): SKIPPING the tests against the real engine !!!\n`);
    return undefined;
  }
}

/** A fresh instance label value, so parallel test files never touch each other's containers. */
export function testInstanceId(): string {
  return `test-${randomBytes(6).toString('hex')}`;
}

/** Removes every container, volume, network and image (snapshots) carrying the instance label. */
export async function removeInstanceResources(docker: Docker, instanceId: string): Promise<void> {
  const filters = { label: [`${LABEL_INSTANCE}=${instanceId}`] };
  const containers = await docker.listContainers({ all: true, filters });
  await Promise.all(containers.map((c) => docker.getContainer(c.Id).remove({ force: true, v: true }).catch(() => undefined)));
  const { Volumes } = await docker.listVolumes({ filters });
  await Promise.all((Volumes ?? []).map((v) => docker.getVolume(v.Name).remove().catch(() => undefined)));
  const networks = await docker.listNetworks({ filters });
  await Promise.all(networks.map((n) => docker.getNetwork(n.Id).remove().catch(() => undefined)));
  const images = await docker.listImages({ filters });
  await Promise.all(images.map((i) => docker.getImage(i.Id).remove({ force: true }).catch(() => undefined)));
}

/** Runs `script` with sh as root in `container`: what it wrote (stdout and stderr) and how it exited. */
export async function execAsRoot(container: Docker.Container, script: string): Promise<{ output: string; exitCode: number | null }> {
  const exec = await container.exec({ Cmd: ['sh', '-c', script], User: '0:0', AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({ hijack: true, stdin: false });
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', resolve);
    stream.on('error', reject);
  });
  return { output: demultiplexLogs(Buffer.concat(chunks)), exitCode: (await exec.inspect()).ExitCode };
}
