export { bridgeWebSocket } from './bridge-websocket.js';
export { forwardHttp } from './forward-http.js';
