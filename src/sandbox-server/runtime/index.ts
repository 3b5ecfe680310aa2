export * from './runtime.js';
export { createDockerRuntime, type DockerRuntimeOptions } from './docker.js';
export { containerNameFor } from './resource-names.js';
export { LABEL_NETWORK, LABEL_SPARE_NETWORK } from './docker-spare-networks.js';
