export { commaSeparated, isAllowedHost, isLoopbackName } from './allowed-hosts.js';
export { browserGuard, browserSteps, type BrowserGuardOptions } from './browser-guard.js';
