export { bridgeWebSocket } from '../../http/bridge-websocket.js';
export { forwardHttp } from './forward-http.js';
