/**
 * The browser's storage as Playwright's storage state (`cookies`, and per origin `localStorage`),
 * plus the current tab's `sessionStorage` on its origin's entry, as OpenHands lists it. Setting it
 * adds the cookies and writes each origin's storage in a blank page of that origin, whose request
 * never leaves the browser.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { z } from 'zod';
import { BrowserActionError, type BrowserResult } from './browser-actions.js';
import type { BrowserSession } from './browser-session.js';
import { READ_SESSION_STORAGE_SCRIPT, writeStorageScript } from './page-scripts.js';

const NameValueSchema = z.object({ name: z.string(), value: z.string() });

const CookieSchema = z.object({
  name: z.string(),
  value: z.string(),
  url: z.string().optional(),
  domain: z.string().optional(),
  path: z.string().optional(),
  expires: z.number().optional(),
  httpOnly: z.boolean().optional(),
  secure: z.boolean().optional(),
  sameSite: z.enum(['Strict', 'Lax', 'None']).optional(),
});

const StorageStateSchema = z.object({
  cookies: z.array(CookieSchema).default([]),
  origins: z
    .array(
      z.object({
        origin: z.string().url(),
        localStorage: z.array(NameValueSchema).default([]),
        sessionStorage: z.array(NameValueSchema).default([]),
      }),
    )
    .default([]),
});
type Entries = z.output<typeof NameValueSchema>[];

export async function getStorage(session: BrowserSession): Promise<BrowserResult> {
  const context = await session.context();
  const page = await session.currentPage();
  const state = await context.storageState();
  const origins: { origin: string; localStorage: Entries; sessionStorage?: Entries }[] = state.origins.map((entry) => ({
    origin: entry.origin,
    localStorage: entry.localStorage,
  }));
  const here = originOf(page.url());
  if (here !== null) {
    const sessionStorage = ((await page.evaluate(READ_SESSION_STORAGE_SCRIPT).catch(() => [])) as Entries);
    if (sessionStorage.length > 0) {
      const entry = origins.find((candidate) => candidate.origin === here);
      if (entry) entry.sessionStorage = sessionStorage;
      else origins.push({ origin: here, localStorage: [], sessionStorage });
    }
  }
  return { text: JSON.stringify({ cookies: state.cookies, origins }, null, 2) };
}

export async function setStorage(session: BrowserSession, storageState: unknown): Promise<BrowserResult> {
  const parsed = StorageStateSchema.safeParse(storageState);
  if (!parsed.success) throw new BrowserActionError(`storage_state is not a storage state: ${z.prettifyError(parsed.error)}`);
  const { cookies, origins } = parsed.data;
  const context = await session.context();
  if (cookies.length > 0) {
    await context.addCookies(cookies).catch((error: Error) => {
      throw new BrowserActionError(`The browser refused the cookies: ${error.message.split('\n')[0]}`);
    });
  }
  const current = await session.currentPage();
  for (const entry of origins) {
    // Session storage lives in one tab: it is set only where the current tab is on that origin.
    const inCurrent = originOf(current.url()) === entry.origin;
    if (inCurrent) await writeStorage(current, entry.localStorage, entry.sessionStorage);
    else if (entry.localStorage.length > 0) await withOriginPage(context, entry.origin, (page) => writeStorage(page, entry.localStorage, []));
  }
  const sessionSkipped = origins.filter((entry) => entry.sessionStorage.length > 0 && originOf(current.url()) !== entry.origin);
  const note = sessionSkipped.length > 0 ? ` Session storage of ${sessionSkipped.map((entry) => entry.origin).join(', ')} was not set: it belongs to a tab, and the current tab is not on that origin.` : '';
  return { text: `Set ${cookies.length} cookie(s) and the storage of ${origins.length} origin(s).${note}` };
}

function writeStorage(page: Page, local: Entries, session: Entries): Promise<void> {
  return page.evaluate(writeStorageScript(local, session)).then(() => undefined);
}

/** A blank page served on `origin` by the browser itself, for writing that origin's storage. */
async function withOriginPage(context: BrowserContext, origin: string, work: (page: Page) => Promise<void>): Promise<void> {
  const page = await context.newPage();
  try {
    await page.route('**/*', (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title></title>' }));
    await page.goto(`${origin}/`, { waitUntil: 'domcontentloaded', timeout: 10_000 });
    await work(page);
  } finally {
    await page.close();
  }
}

function originOf(url: string): string | null {
  try {
    const { origin } = new URL(url);
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}
