import { ConflictError, validationError } from '../../../errors/index.js';
import type { SpecBuildStatus } from '../../../contracts/spec-build.js';
import type { SpecBuildRequest } from '../../models/sandbox-spec.js';
import type { ServiceContext, SpecBuildJob } from '../context.js';
import { BuildContextError, buildHash, readBuildContext, specImageTag } from './build-context.js';

/** A build checked and hashed, before its spec is written. */
export interface PreparedBuild {
  tag: string;
  dockerfile: string;
  status: SpecBuildStatus;
  cached: boolean;
  context: SpecBuildJob['context'];
  /** The log's first line. */
  firstLine: string;
}

/** An instruction Docker needs before any other but ARG (and comments, parser directives). */
const FROM_LINE = /^\s*FROM\s+\S/im;

/**
 * Reads a build's input (bad input is a 422 saying why) and finds whether its image is built
 * already: on every engine the spec's sandboxes may be placed on (READY at once, a cache hit), on
 * some (cached, copied to the others), or none (built).
 */
export async function prepareSpecBuild(ctx: ServiceContext, build: SpecBuildRequest, engineLabels: Record<string, string>): Promise<PreparedBuild> {
  const images = ctx.specImages;
  if (!images) throw validationError('body', ['build'], 'this control plane has no engine to build images on');
  if (!FROM_LINE.test(build.dockerfile)) throw validationError('body', ['build', 'dockerfile'], 'has no FROM instruction');
  let context: SpecBuildJob['context'] = null;
  let entries: ReturnType<typeof readBuildContext>['entries'] = [];
  if (build.context_tar_base64 !== undefined && build.context_tar_base64 !== '') {
    try {
      const read = readBuildContext(Buffer.from(build.context_tar_base64, 'base64'), images.maxContextBytes);
      context = { archive: read.archive, dockerignore: read.dockerignore };
      entries = read.entries;
    } catch (error) {
      if (error instanceof BuildContextError) throw validationError('body', ['build', 'context_tar_base64'], error.message);
      throw error;
    }
  }
  const tag = specImageTag(buildHash(build.dockerfile, entries));
  const { have, of } = await images.presence(tag, engineLabels);
  if (of === 0) {
    throw validationError('body', ['engine_labels'], 'no active engine carries these labels: there is nowhere to build the image or run its sandboxes');
  }
  if (have === of) {
    return { tag, dockerfile: build.dockerfile, status: 'READY', cached: true, context, firstLine: `cache hit: ${tag} was built before from the same Dockerfile and context; nothing to build` };
  }
  const firstLine = have > 0 ? `cache hit: ${tag} was built before; copying it to the engines that lack it` : `building ${tag}`;
  return { tag, dockerfile: build.dockerfile, status: 'BUILDING', cached: have > 0, context, firstLine };
}

/**
 * A spec whose image is still building starts no sandbox yet (409: ask again once it is READY), and
 * one whose build failed none at all (422, with why). A spec naming an image has no build.
 */
export function refuseUnbuiltSpec(spec: { id: string; buildStatus: SpecBuildStatus | null; buildDetail: string | null }): void {
  if (spec.buildStatus === 'BUILDING') {
    throw new ConflictError(
      `Sandbox spec ${spec.id} is still building its image; start its sandboxes once it is READY (GET /api/v1/sandbox-specs/${encodeURIComponent(spec.id)}/build-log?follow=true follows the build)`,
    );
  }
  if (spec.buildStatus === 'FAILED') {
    throw validationError('body', ['sandbox_spec_id'], `sandbox spec ${spec.id} has no image: its build failed (${spec.buildDetail ?? 'no reason recorded'}); create the spec again once its Dockerfile is fixed`);
  }
}
