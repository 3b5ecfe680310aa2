import type Docker from 'dockerode';
import { agentProcessLimit } from './agent-process-limit.js';
import { type LogRotation, logConfigFor } from './container-logs.js';
import { LLM_RELAY_EXTRA_HOST } from './llm-relay-access.js';
import { containerNameFor } from './resource-names.js';
import { type ContainerRequest, LABEL_PORT_PREFIX, LABEL_SANDBOX_ID, LABEL_SPEC_ID } from './runtime.js';

/** `network` is the id or name of the sandbox's network; `extraLabels` say which spare network that is. */
export function createOptionsFor(
  request: ContainerRequest,
  owner: Record<string, string>,
  network: string,
  publishHost: string,
  extraLabels: Record<string, string>,
  logRotation: LogRotation,
): Docker.ContainerCreateOptions {
  const labels: Record<string, string> = {
    ...extraLabels,
    [LABEL_SANDBOX_ID]: request.sandboxId,
    [LABEL_SPEC_ID]: request.specId,
    ...owner,
  };
  const exposedPorts: Record<string, object> = {};
  const portBindings: Docker.PortMap = {};
  for (const port of request.exposedPorts) {
    labels[`${LABEL_PORT_PREFIX}${port.name}`] = String(port.container_port);
    exposedPorts[`${port.container_port}/tcp`] = {};
    // The engine's advertise host only (loopback by default), and HostPort empty so the engine
    // picks a free port atomically.
    portBindings[`${port.container_port}/tcp`] = [{ HostIp: publishHost, HostPort: '' }];
  }
  return {
    name: containerNameFor(request.sandboxId),
    Image: request.image,
    ...(request.command ? { Cmd: request.command } : {}),
    Env: Object.entries(request.env).map(([key, value]) => `${key}=${value}`),
    WorkingDir: request.workingDir,
    Labels: labels,
    ExposedPorts: exposedPorts,
    HostConfig: {
      // Its own network only: never Docker's default bridge, which every other container shares.
      NetworkMode: network,
      // The one address of the host a sandbox may reach, at the LLM relay's port alone (llm-relay-access.ts).
      ExtraHosts: [LLM_RELAY_EXTRA_HOST],
      PortBindings: portBindings,
      Mounts: [
        {
          Type: 'volume',
          Source: request.dataVolume.name,
          Target: request.dataVolume.mountPath,
          // Labels let cleanup find the volume by its owner like the container.
          VolumeOptions: { NoCopy: false, Labels: { [LABEL_SANDBOX_ID]: request.sandboxId, ...owner }, DriverConfig: { Name: 'local', Options: {} } },
        },
      ],
      ...(request.cpus ? { NanoCpus: Math.round(request.cpus * 1e9) } : {}),
      ...(request.memoryMb ? { Memory: request.memoryMb * 1024 * 1024 } : {}),
      ...(request.pidsLimit ? { PidsLimit: request.pidsLimit } : {}),
      ...ulimitsFor(request),
      Runtime: request.runtime,
      Privileged: false,
      SecurityOpt: ['no-new-privileges:true'],
      // A tiny init as PID 1 reaps the zombies that the agent's shell tools leave behind.
      Init: true,
      RestartPolicy: { Name: 'no' },
      LogConfig: logConfigFor(logRotation),
    },
  };
}

/** The agent's own process limit, where the PIDs limit alone would end the whole sandbox (agent-process-limit.ts). */
function ulimitsFor(request: ContainerRequest): Pick<Docker.HostConfig, 'Ulimits'> {
  const limit = agentProcessLimit(request.runtime, request.pidsLimit);
  return limit === null ? {} : { Ulimits: [{ Name: 'nproc', Soft: limit, Hard: limit }] };
}
