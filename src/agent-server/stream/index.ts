export { StreamCloseCode, type StreamClose } from './close-codes.js';
export type { EventStreamSource } from './event-stream-source.js';
export { registerEventSocket, type EventSocketDeps } from './register-event-socket.js';
export { registerBashSocket, type BashSocketDeps } from './register-bash-socket.js';
