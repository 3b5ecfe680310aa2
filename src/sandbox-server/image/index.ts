export { type AgentServerImageOptions, buildAgentServerImage, ensureAgentServerImage } from './build.js';
export { copyImage } from './copy.js';
export { buildSpecImage, SpecImageBuildError } from './build-spec-image.js';
