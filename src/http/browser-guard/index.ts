export { commaSeparated, isAllowedHost, isLoopbackName } from './allowed-hosts.js';
export { browserGuard, type BrowserGuardOptions } from './browser-guard.js';
