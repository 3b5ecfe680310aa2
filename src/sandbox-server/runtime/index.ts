export * from './runtime.js';
export { containerNameFor, createDockerRuntime, type DockerRuntimeOptions } from './docker.js';
export { createFakeRuntime, type FakeRuntime, type FakeRuntimeControls } from './fake.js';
