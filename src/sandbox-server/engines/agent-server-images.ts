import type Docker from 'dockerode';
import type { Logger } from '../../logger.js';
import type { EngineRow } from '../db/schema.js';
import { copyImage, ensureAgentServerImage } from '../image/index.js';
import { imageIdOn } from '../runtime/image-id.js';

export interface AgentServerImagesOptions {
  tag: string;
  baseImage: string;
  dockerOf(row: EngineRow): Docker;
  log: Logger;
}

interface Source {
  engine: string;
  docker: Docker;
  /** The build (or the check that the image is current) on it. */
  ready: Promise<unknown>;
}

/**
 * The agent-server image on every engine that needs it: built (or found current) on the first
 * engine asked, then copied to each other engine whose image differs (docker save into docker
 * load over the engines' APIs: no registry needed; the copy keeps the image's id), one log line
 * per step. An engine the copy cannot reach it from builds it itself.
 */
export function agentServerImages(options: AgentServerImagesOptions): { ensureOn(row: EngineRow): Promise<void> } {
  const { tag, log } = options;
  const build = (docker: Docker) =>
    ensureAgentServerImage({ docker, baseImage: options.baseImage, tag, onProgress: (line) => log.info({ image: tag }, line) });
  let source: Source | undefined;

  async function copyFrom(from: Source, to: Docker, engine: string): Promise<string> {
    await from.ready;
    const [sourceId, targetId] = await Promise.all([imageIdOn(from.docker, tag), imageIdOn(to, tag)]);
    if (sourceId === null) throw new Error(`${tag} is not on engine ${from.engine}`);
    if (sourceId === targetId) return 'present';
    await copyImage(from.docker, to, tag, (line) => log.info({ image: tag, engine, from: from.engine }, line));
    return 'copied';
  }

  return {
    async ensureOn(row) {
      const docker = options.dockerOf(row);
      source ??= { engine: row.name, docker, ready: build(docker) };
      const from = source;
      const outcome =
        from.engine === row.name
          ? String(await from.ready)
          : await copyFrom(from, docker, row.name).catch(async (err: unknown) => {
              log.warn({ err, image: tag, engine: row.name, from: from.engine }, 'agent-server image could not be copied; building it on the engine');
              return String(await build(docker));
            });
      log.info({ image: tag, engine: row.name, outcome }, 'agent-server image ready');
    },
  };
}
