import type Docker from 'dockerode';
import type { AgentBundle, AgentBundles } from './agent-bundle.js';
import { statusCodeOf, toRuntimeError } from './docker-errors.js';
import { whyUnfit } from './image-fitness.js';
import { type ContainerRequest, LABEL_AGENT_SERVER_VERSION, RuntimeError } from './runtime.js';

/** How a container runs its agent-server (see launchOf), and the id of its image when the engine has it. */
export type Launch = ({ kind: 'own-image' } | { kind: 'own-command' } | { kind: 'brought'; bundle: AgentBundle; env: string[] | undefined }) & { imageId: string | undefined };

/**
 * What a runtime learnt of images by id, for the creates that follow (an id's content never
 * changes): those found fit for the agent-server, and the files read from them (docker-trust.ts).
 */
export interface ImageMemory {
  fit: Set<string>;
  files: Map<string, Promise<Buffer | undefined>>;
}

export function imageMemory(): ImageMemory {
  return { fit: new Set(), files: new Map() };
}

/**
 * How the sandbox runs its agent-server: an image of ours runs it as built; a spec's own command
 * is run as given; any other image gets the agent-server brought in (agent-bundle.ts).
 */
export async function launchOf(docker: Docker, bundles: AgentBundles, request: ContainerRequest): Promise<Launch> {
  let info: Docker.ImageInspectInfo | undefined;
  try {
    info = await docker.getImage(request.image).inspect();
  } catch (error) {
    // A missing image fails the create that follows, saying so.
    if (statusCodeOf(error) !== 404) throw toRuntimeError(error, 'image inspect');
  }
  const imageId = info?.Id;
  if (info?.Config?.Labels?.[LABEL_AGENT_SERVER_VERSION] !== undefined) return { kind: 'own-image', imageId };
  if (request.command || !info) return { kind: 'own-command', imageId };
  return { kind: 'brought', bundle: await bundles.current(), env: info.Config?.Env, imageId };
}

/**
 * A container of an image the agent-server cannot run in is removed, and the sandbox told why
 * (final). An image found fit once is not looked into again.
 */
export async function refuseUnfit(container: Docker.Container, image: string, launch: { env: string[] | undefined; imageId: string | undefined }, memory: ImageMemory): Promise<void> {
  if (launch.imageId !== undefined && memory.fit.has(launch.imageId)) return;
  const unfit = await whyUnfit(container, image, launch.env).catch(async (error: unknown) => {
    await container.remove({ force: true }).catch(() => undefined);
    throw error;
  });
  if (unfit === null) {
    if (launch.imageId !== undefined) memory.fit.add(launch.imageId);
    return;
  }
  await container.remove({ force: true }).catch(() => undefined);
  throw new RuntimeError(unfit, true);
}
