/**
 * One conversation's browser: started on the first call that needs it, its tabs named by short
 * ids the agent can pass back, and ended with the conversation. A browser that went away (it
 * crashed, or the agent killed it) is started afresh on the next call.
 */
import { randomBytes } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { AgentUser } from '../../../agent-user.js';
import { BrowserUnavailableError, findChromium, startChromium, type RunningChromium } from './chromium.js';

export interface BrowserSessionOptions {
  agentUser?: AgentUser;
  /** The Chromium to run; found on PATH (or CHROMIUM_PATH) at each start when absent. */
  executablePath?: string;
}

export interface TabInfo {
  tab_id: string;
  url: string;
  title: string;
  current: boolean;
}

export interface BrowserSession {
  /** The tab the agent works in, starting the browser when it is not running. */
  currentPage(): Promise<Page>;
  /** The browser's one context (its cookies and storage), starting the browser when needed. */
  context(): Promise<BrowserContext>;
  /** Opens a new tab and makes it the current one. */
  newTab(): Promise<Page>;
  /** Every open tab, in the order they were opened. */
  tabs(): Promise<TabInfo[]>;
  /** The page of a tab id, or undefined. */
  pageOf(tabId: string): Page | undefined;
  tabIdOf(page: Page): string;
  /** Makes a page the current tab. */
  select(page: Page): void;
  /** Whether the browser runs now (nothing is started to answer this). */
  isRunning(): boolean;
  close(): Promise<void>;
}

interface Running {
  chromium: RunningChromium;
  browser: Browser;
  context: BrowserContext;
  tabs: Map<Page, string>;
  current: Page | null;
}

export function createBrowserSession(options: BrowserSessionOptions = {}): BrowserSession {
  let running: Promise<Running> | null = null;
  /** What `running` resolved to, for the calls that must not start a browser. */
  let settled: Running | null = null;
  let closed = false;

  async function start(): Promise<Running> {
    const executablePath = options.executablePath ?? findChromium();
    const { chromium } = await loadPlaywright();
    const chrome = await startChromium({ executablePath, agentUser: options.agentUser });
    try {
      const browser = await chromium.connectOverCDP(chrome.wsEndpoint, { timeout: 30_000 });
      const context = browser.contexts()[0] ?? (await browser.newContext());
      const state: Running = { chromium: chrome, browser, context, tabs: new Map(), current: null };
      const track = (page: Page) => {
        if (!state.tabs.has(page)) state.tabs.set(page, newTabId(state.tabs));
        page.once('close', () => {
          state.tabs.delete(page);
          if (state.current === page) state.current = [...state.tabs.keys()].at(-1) ?? null;
        });
      };
      context.pages().forEach(track);
      context.on('page', track);
      state.current = context.pages()[0] ?? null;
      browser.once('disconnected', () => {
        if (running !== null) void forget(running);
        void chrome.stop();
      });
      return state;
    } catch (error) {
      await chrome.stop();
      throw error;
    }
  }

  async function forget(which: Promise<Running>): Promise<void> {
    if (running !== which) return;
    running = null;
    settled = null;
  }

  function ensure(): Promise<Running> {
    if (closed) return Promise.reject(new Error('The browser of this conversation was closed.'));
    if (running === null) {
      const attempt = start();
      running = attempt;
      attempt.then(
        (state) => {
          if (running === attempt) settled = state;
        },
        () => forget(attempt),
      );
    }
    return running;
  }

  async function pageIn(state: Running): Promise<Page> {
    if (state.current === null || state.current.isClosed()) {
      state.current = await state.context.newPage();
    }
    return state.current;
  }

  return {
    currentPage: async () => pageIn(await ensure()),
    context: async () => (await ensure()).context,
    async newTab() {
      const state = await ensure();
      state.current = await state.context.newPage();
      return state.current;
    },
    async tabs() {
      const state = await ensure();
      await pageIn(state);
      return Promise.all(
        [...state.tabs].map(async ([page, id]) => ({ tab_id: id, url: page.url(), title: await titleOf(page), current: page === state.current })),
      );
    },
    pageOf(tabId) {
      const state = settled;
      if (state === null) return undefined;
      return [...state.tabs].find(([, id]) => id === tabId)?.[0];
    },
    tabIdOf(page) {
      return settled?.tabs.get(page) ?? '';
    },
    select(page) {
      if (settled !== null) settled.current = page;
    },
    isRunning: () => settled !== null,
    async close() {
      closed = true;
      const state = await running?.catch(() => null);
      running = null;
      settled = null;
      if (!state) return;
      await state.browser.close().catch(() => undefined);
      await state.chromium.stop();
    },
  };
}

/** The page's title, or '' while it navigates (reading it then throws). */
export async function titleOf(page: Page): Promise<string> {
  return page.title().catch(() => '');
}

/** Four hex digits, as OpenHands' tab ids are four characters; unique among the open tabs. */
function newTabId(tabs: Map<Page, string>): string {
  const taken = new Set(tabs.values());
  for (;;) {
    const id = randomBytes(2).toString('hex').toUpperCase();
    if (!taken.has(id)) return id;
  }
}

async function loadPlaywright(): Promise<typeof import('playwright-core')> {
  try {
    return await import('playwright-core');
  } catch (error) {
    throw new BrowserUnavailableError(`The browser driver (playwright-core) is not installed beside the agent-server: ${(error as Error).message}`);
  }
}
