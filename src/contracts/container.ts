/** A container's state as Docker names it; every runtime driver reports one of these. */
export const CONTAINER_STATES = ['created', 'running', 'paused', 'restarting', 'removing', 'exited', 'dead'] as const;
export type ContainerState = (typeof CONTAINER_STATES)[number];
