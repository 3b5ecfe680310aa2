import type { Logger } from '../../logger.js';
import type { SandboxServerConfig } from '../config.js';
import type { Database } from '../db/client.js';
import { failAbandonedBuilds } from '../engines/spec-build-log.js';
import { buildEnginesFor, SpecImageBuilds } from '../engines/spec-image-builds.js';
import type { Component } from './component.js';

/** Carried by every image built for a spec: the installation that built it. */
const LABEL_SPEC_BUILD = 'sandbox-server.spec-build';

/** How often the builds other replicas abandoned (they went away mid-build) are looked for. */
const ABANDONED_SWEEP_MS = 30_000;

export interface SpecImageBuildsComponentOptions {
  config: SandboxServerConfig;
  db: Database;
  installationId: string;
  log: Logger;
}

/** Spec image builds (engines/spec-image-builds.ts); stopping FAILs the builds still running here. */
export function specImageBuildsComponent(options: SpecImageBuildsComponentOptions): Component<SpecImageBuilds> {
  const { config, log } = options;
  const builds = new SpecImageBuilds({
    db: options.db,
    log,
    enginesFor: (labels) => buildEnginesFor(options.db, config.DOCKER_TLS_CERT_DIR, labels),
    maxContextBytes: config.SPEC_BUILD_CONTEXT_MAX_MB * 1024 * 1024,
    timeoutMs: config.SPEC_BUILD_TIMEOUT_SECONDS * 1000,
    // Not our owner labels: a container of the image would inherit them and pass for one of ours.
    imageLabels: { [LABEL_SPEC_BUILD]: options.installationId },
  });
  let sweep: NodeJS.Timeout | undefined;
  const failAbandoned = () =>
    void failAbandonedBuilds(options.db).then(
      (count) => count > 0 && log.warn({ count }, 'spec builds abandoned by a control plane that went away are FAILED'),
      (err: unknown) => log.warn({ err }, 'could not look for abandoned spec builds'),
    );
  return {
    name: 'spec-image-builds',
    async start() {
      failAbandoned();
      sweep = setInterval(failAbandoned, ABANDONED_SWEEP_MS);
      sweep.unref();
      return builds;
    },
    async stop() {
      clearInterval(sweep);
      await builds.stop();
    },
  };
}
