import type Docker from 'dockerode';
import { CONTAINER_STATES, type ContainerState } from '../../contracts/container.js';
import { type ContainerObservation, LABEL_AGENT_SERVER_VERSION, LABEL_INSTALLATION, LABEL_PORT_PREFIX, LABEL_SANDBOX_ID } from './runtime.js';
import { LABEL_AGENT_BUNDLE } from './agent-bundle.js';

/** What an inspect says of a container; its ports are those published on `publishHost`. */
export function observationFromInspect(info: Docker.ContainerInspectInfo, publishHost: string): ContainerObservation {
  const labels = info.Config.Labels ?? {};
  const state = containerStateOf(info.State.Status);
  const hostPorts: Record<string, number> = {};
  for (const [name, containerPort] of namedPortsOf(labels)) {
    const binding = info.NetworkSettings.Ports?.[`${containerPort}/tcp`]?.find((b) => b.HostIp === publishHost);
    if (binding?.HostPort) hostPorts[name] = Number(binding.HostPort);
  }
  return {
    containerId: info.Id,
    sandboxId: labels[LABEL_SANDBOX_ID] ?? '',
    installation: labels[LABEL_INSTALLATION],
    state,
    exitCode: state === 'exited' || state === 'dead' ? info.State.ExitCode : null,
    oomKilled: info.State.OOMKilled === true,
    hostPorts,
    agentServerVersion: labels[LABEL_AGENT_SERVER_VERSION] ?? labels[LABEL_AGENT_BUNDLE] ?? null,
    finishedAt: state === 'exited' || state === 'dead' ? Date.parse(info.State.FinishedAt) || null : null,
  };
}

/** What a listing says of a container: no OOM flag nor finishing time, which only an inspect tells. */
export function observationFromListing(info: Docker.ContainerInfo, publishHost: string): ContainerObservation {
  const state = containerStateOf(info.State);
  const hostPorts: Record<string, number> = {};
  for (const [name, containerPort] of namedPortsOf(info.Labels)) {
    const port = info.Ports.find((p) => p.PrivatePort === containerPort && p.IP === publishHost && p.PublicPort);
    if (port) hostPorts[name] = port.PublicPort;
  }
  return {
    containerId: info.Id,
    sandboxId: info.Labels[LABEL_SANDBOX_ID] ?? '',
    installation: info.Labels[LABEL_INSTALLATION],
    state,
    // The listing carries the exit code only in its human status ("Exited (137) 2 seconds ago"),
    // a format Docker has kept stable; parsing it spares one inspect per stopped container per pass.
    exitCode: state === 'exited' ? exitCodeFromStatus(info.Status) : null,
    // Not in the listing; list() inspects the few stopped containers to fill it in.
    oomKilled: false,
    hostPorts,
    agentServerVersion: info.Labels[LABEL_AGENT_SERVER_VERSION] ?? info.Labels[LABEL_AGENT_BUNDLE] ?? null,
    finishedAt: null,
  };
}

function namedPortsOf(labels: Record<string, string>): [string, number][] {
  return Object.entries(labels)
    .filter(([key]) => key.startsWith(LABEL_PORT_PREFIX))
    .map(([key, value]) => [key.slice(LABEL_PORT_PREFIX.length), Number(value)]);
}

function containerStateOf(value: string): ContainerState {
  const state = CONTAINER_STATES.find((s) => s === value);
  // An unknown state from a newer engine is safest read as "not usable".
  return state ?? 'dead';
}

function exitCodeFromStatus(status: string): number | null {
  const match = /^Exited \((-?\d+)\)/.exec(status);
  return match?.[1] === undefined ? null : Number(match[1]);
}
