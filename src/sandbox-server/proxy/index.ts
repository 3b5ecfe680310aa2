export { bridgeWebSocket } from './bridge-websocket.js';
export { type AgentServerTarget, forwardHttp } from './forward-http.js';
