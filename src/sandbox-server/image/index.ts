export { type AgentServerImageOptions, buildAgentServerImage, ensureAgentServerImage } from './build.js';
