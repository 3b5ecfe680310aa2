export { bridgeWebSocket } from './bridge-websocket.js';
export { type AgentServerTarget, agentServerTarget, forwardHttp } from './forward-http.js';
