import type { Logger } from '../../logger.js';
import type { EngineIdentity } from '../services/engines/engine-identity.js';
import { dockerFor } from '../runtime/docker-for.js';

/** How long a registration waits for an engine to say who it is before registering it unchecked. */
const IDENTITY_TIMEOUT_MS = 5_000;

/**
 * Asks the engine at a URL who it is: its `docker info` ID, with its host name and data root. The
 * ID alone does not tell dockerds apart: up to Docker 20.10 it comes from /etc/docker/key.json,
 * which every dockerd of one host shares (this machine's test engines all report one ID), while two
 * dockerds of one host never share a data root. An engine that does not answer (yet) is registered
 * all the same, unchecked: it may be on its way up, and its health will say so.
 */
export function dockerIdentity(tlsCertDir: string | undefined, log: Logger): EngineIdentity {
  return async (dockerUrl) => {
    const unchecked = (why: unknown) => {
      log.warn({ err: why, dockerUrl }, 'engine did not say who it is: registered without checking that it is not an engine registered already');
      return null;
    };
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(unchecked(`no answer to docker info within ${IDENTITY_TIMEOUT_MS / 1000} s`)), IDENTITY_TIMEOUT_MS);
    });
    const info = Promise.resolve()
      .then(() => dockerFor({ dockerUrl }, tlsCertDir).info())
      .then((answer: { ID?: unknown; Name?: unknown; DockerRootDir?: unknown }) =>
        typeof answer.ID === 'string' && answer.ID !== '' ? `ID ${answer.ID}, data root ${String(answer.DockerRootDir)} on ${String(answer.Name)}` : unchecked('docker info reported no ID'),
      unchecked);
    try {
      return await Promise.race([info, timeout]);
    } finally {
      clearTimeout(timer);
    }
  };
}
