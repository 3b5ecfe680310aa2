export * from './runtime.js';
export { containerNameFor, createDockerRuntime, type DockerRuntimeOptions } from './docker.js';
export { LABEL_NETWORK, LABEL_SPARE_NETWORK } from './docker-spare-networks.js';
