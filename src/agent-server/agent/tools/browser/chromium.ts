/**
 * The Chromium behind the browser tools: found on this machine, started as the agent user (the
 * agent's programs drive it anyway, and a page that breaks out of the renderer gets no more than
 * the agent has), and reached over the DevTools protocol on 127.0.0.1.
 *
 * Playwright's own launch cannot start a program as another user, so we start Chromium ourselves
 * and connect to the DevTools address it prints. Its renderer sandbox is off: it needs user
 * namespaces, which a container (gVisor's above all) does not give.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { spawnAsAgent, type AgentUser } from '../../../agent-user.js';

/** The programs tried on PATH, in order, when CHROMIUM_PATH is not set. */
export const CHROMIUM_NAMES = ['chromium', 'chromium-headless-shell', 'chromium-browser', 'google-chrome', 'google-chrome-stable'] as const;

const STARTUP_TIMEOUT_MS = 30_000;
const DEVTOOLS_LINE = /DevTools listening on (ws:\/\/\S+)/;

export class BrowserUnavailableError extends Error {}

/**
 * The Chromium executable: CHROMIUM_PATH when set (it must exist), else the first of CHROMIUM_NAMES
 * on PATH. Looked up on every start, so a browser the agent installs later is found.
 */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.CHROMIUM_PATH;
  if (configured) {
    if (isExecutable(configured)) return configured;
    throw new BrowserUnavailableError(`CHROMIUM_PATH is set to ${configured}, which is not an executable file.`);
  }
  for (const name of CHROMIUM_NAMES) {
    for (const dir of (env.PATH ?? '').split(path.delimiter)) {
      const candidate = path.join(dir, name);
      if (dir !== '' && isExecutable(candidate)) return candidate;
    }
  }
  throw new BrowserUnavailableError(
    `No Chromium browser was found in this sandbox (looked for ${CHROMIUM_NAMES.join(', ')} on PATH, and CHROMIUM_PATH is not set). ` +
      'The browser tools need an image with Chromium, e.g. Debian\'s chromium or chromium-headless-shell package. ' +
      'Use the terminal (curl) to fetch pages instead.',
  );
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export interface RunningChromium {
  /** The DevTools WebSocket address to connect Playwright to. */
  wsEndpoint: string;
  /** Ends Chromium and every process it started, and removes its profile. */
  stop(): Promise<void>;
}

export interface ChromiumOptions {
  executablePath: string;
  agentUser?: AgentUser;
  /** The page size screenshots are taken at. */
  windowSize?: { width: number; height: number };
}

/** Starts Chromium headless with a fresh profile; rejects with what it printed if it does not come up. */
export async function startChromium(options: ChromiumOptions): Promise<RunningChromium> {
  const profileDir = await mkdtemp(path.join(os.tmpdir(), 'agent-browser-'));
  if (options.agentUser) await chown(profileDir, options.agentUser.uid, options.agentUser.gid);
  const { width, height } = options.windowSize ?? { width: 1280, height: 720 };
  const child = spawn(
    options.executablePath,
    [
      '--headless',
      '--no-sandbox',
      '--disable-dev-shm-usage',
      '--disable-gpu',
      '--disable-crash-reporter',
      '--disable-breakpad',
      '--no-first-run',
      '--no-default-browser-check',
      '--hide-scrollbars',
      '--mute-audio',
      // A page restored from the back-forward cache fires no load events to wait for.
      '--disable-back-forward-cache',
      `--window-size=${width},${height}`,
      '--remote-debugging-address=127.0.0.1',
      '--remote-debugging-port=0',
      `--user-data-dir=${profileDir}`,
      'about:blank',
    ],
    // Its own process group, so that stopping it ends the renderers and helpers it started too.
    { ...spawnAsAgent(options.agentUser, process.env), cwd: profileDir, detached: true, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const stop = async () => {
    killGroup(child);
    await rm(profileDir, { recursive: true, force: true }).catch(() => undefined);
  };
  try {
    return { wsEndpoint: await devtoolsAddress(child, options.executablePath), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function devtoolsAddress(child: ChildProcess, executable: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let printed = '';
    const timer = setTimeout(() => fail(`it printed no DevTools address within ${STARTUP_TIMEOUT_MS / 1000} s`), STARTUP_TIMEOUT_MS);
    const fail = (why: string) => {
      clearTimeout(timer);
      const tail = printed.trim().split('\n').slice(-5).join('\n');
      reject(new BrowserUnavailableError(`Chromium (${executable}) did not start: ${why}.${tail ? `\n${tail}` : ''}`));
    };
    child.on('error', (error) => fail(error.message));
    child.on('exit', (code, signal) => fail(`it exited with ${signal ?? `code ${code}`}`));
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      // Keep only what a failure report needs; Chromium keeps logging for as long as it runs.
      if (printed.length < 64_000) printed += chunk;
      const match = DEVTOOLS_LINE.exec(printed);
      if (match?.[1]) {
        clearTimeout(timer);
        child.stderr?.removeAllListeners('data');
        child.stderr?.resume();
        resolve(match[1]);
      }
    });
  });
}

/** The whole group: a launcher script may have exited and left Chromium running, or still wait for it. */
function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // No process of the group is left.
  }
}
