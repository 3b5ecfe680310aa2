/**
 * The words of the engine fleet, shared by the engines table, the API models, placement and the
 * client.
 */

/**
 * Whether new sandboxes may be placed on an engine: ACTIVE takes them; CORDONED keeps its sandboxes
 * and takes no new ones; DRAINING takes none and moves its sandboxes away.
 */
export const ENGINE_STATES = ['ACTIVE', 'CORDONED', 'DRAINING'] as const;
export type EngineState = (typeof ENGINE_STATES)[number];

/**
 * What the engine's reconciler last saw: HEALTHY answered its listing; UNREACHABLE did not (its
 * event stream dropped, or a listing failed). Until first seen an engine's health is unknown (null).
 */
export const ENGINE_HEALTHS = ['HEALTHY', 'UNREACHABLE'] as const;
export type EngineHealth = (typeof ENGINE_HEALTHS)[number];

/** The engine registered when none is configured: this machine's Docker engine. */
export const LOCAL_ENGINE = 'local';

/** Lower-case letters, digits and inner dashes, up to 40: it names the engine's lease and metrics. */
export const ENGINE_NAME_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;

/** The schemes dockerode speaks: a local socket, TCP (TLS when DOCKER_TLS_CERT_DIR is set), SSH. */
export const DOCKER_URL_PATTERN = /^(?:unix:\/\/\/\S+|tcp:\/\/[^\s/:]+:\d{1,5}|ssh:\/\/(?:[^\s/@]+@)?[^\s/:]+(?::\d{1,5})?)$/;

/** A host name or IPv4/IPv6 address, without scheme or port. */
export const ADVERTISE_HOST_PATTERN = /^(?:[a-zA-Z0-9.-]+|\[[0-9a-fA-F:]+\])$/;

/**
 * How an OCI runtime did in its self-test (a short container listing, stat-ing, writing a file and
 * running a process): ok; failed (the reason is given); unknown when the engine had no image to
 * test with.
 */
export const RUNTIME_PROBE_STATUSES = ['ok', 'failed', 'unknown'] as const;
export type RuntimeProbeStatus = (typeof RUNTIME_PROBE_STATUSES)[number];
