import type Docker from 'dockerode';
import type { AgentBundle, AgentBundles } from './agent-bundle.js';
import { statusCodeOf, toRuntimeError } from './docker-errors.js';
import { whyUnfit } from './image-fitness.js';
import { type ContainerRequest, LABEL_AGENT_SERVER_VERSION, RuntimeError } from './runtime.js';

/** How a container runs its agent-server (see launchOf). */
export type Launch = { kind: 'own-image' } | { kind: 'own-command' } | { kind: 'brought'; bundle: AgentBundle; env: string[] | undefined };

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
  if (info?.Config?.Labels?.[LABEL_AGENT_SERVER_VERSION] !== undefined) return { kind: 'own-image' };
  if (request.command || !info) return { kind: 'own-command' };
  return { kind: 'brought', bundle: await bundles.current(), env: info.Config?.Env };
}

/** A container of an image the agent-server cannot run in is removed, and the sandbox told why (final). */
export async function refuseUnfit(container: Docker.Container, image: string, env: string[] | undefined): Promise<void> {
  const unfit = await whyUnfit(container, image, env).catch(async (error: unknown) => {
    await container.remove({ force: true }).catch(() => undefined);
    throw error;
  });
  if (unfit === null) return;
  await container.remove({ force: true }).catch(() => undefined);
  throw new RuntimeError(unfit, true);
}
