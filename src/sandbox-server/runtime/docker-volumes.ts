import type Docker from 'dockerode';
import { statusCodeOf, toRuntimeError } from './docker-errors.js';
import { LABEL_INSTALLATION, LABEL_INSTANCE, LABEL_SANDBOX_ID, type SandboxRuntime } from './runtime.js';

/** The verbs on sandboxes' data volumes (their copies for snapshots are docker-snapshots.ts's). */
export function createDockerVolumes(docker: Docker, instanceId: string): Pick<SandboxRuntime, 'removeVolume' | 'listUnusedVolumes'> {
  return {
    async removeVolume(name) {
      try {
        await docker.getVolume(name).remove();
      } catch (error) {
        if (statusCodeOf(error) === 404) return;
        throw toRuntimeError(error, 'remove volume');
      }
    },

    async listUnusedVolumes() {
      try {
        const { Volumes } = await docker.listVolumes({ filters: { label: [`${LABEL_INSTANCE}=${instanceId}`, LABEL_SANDBOX_ID], dangling: ['true'] } });
        return (Volumes ?? []).map((volume) => ({
          name: volume.Name,
          sandboxId: volume.Labels?.[LABEL_SANDBOX_ID] ?? '',
          installation: volume.Labels?.[LABEL_INSTALLATION],
        }));
      } catch (error) {
        throw toRuntimeError(error, 'list volumes');
      }
    },
  };
}
