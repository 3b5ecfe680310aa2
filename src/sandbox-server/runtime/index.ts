export * from './runtime.js';
export { containerNameFor, createDockerRuntime, type DockerRuntimeOptions } from './docker.js';
