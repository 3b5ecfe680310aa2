/**
 * The words of a spec built from a Dockerfile (our extension), shared by the database column, the
 * API models and the client: BUILDING until its image is on the engines its sandboxes may be
 * placed on, then READY, or FAILED with its log and a reason. Specs naming an image have no build.
 */
export const SPEC_BUILD_STATUSES = ['BUILDING', 'READY', 'FAILED'] as const;
export type SpecBuildStatus = (typeof SPEC_BUILD_STATUSES)[number];

/** The repository of the images built for specs, each tagged by the hash of its Dockerfile and context. */
export const SPEC_IMAGE_REPOSITORY = 'sandbox-server/spec-build';
