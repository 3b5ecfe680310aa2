/**
 * What each browser tool does to the session's browser, as text for the LLM (and a screenshot
 * when asked for). Errors the agent can act on (no such element or tab) are thrown as
 * BrowserActionError; the tools turn every throw into an error observation.
 */
import type { Locator, Page } from 'playwright-core';
import { titleOf, type BrowserSession } from './browser-session.js';
import { INDEX_ATTRIBUTE, markdownScript, MAX_ELEMENTS, scrollScript, SNAPSHOT_SCRIPT, type PageSnapshot } from './page-scripts.js';

export class BrowserActionError extends Error {}

export interface BrowserResult {
  text: string;
  /** A PNG screenshot, base64. */
  screenshot?: string;
}

/** How long one page load or element action may take before it is reported as failed. */
const NAVIGATION_TIMEOUT_MS = 30_000;
const ACTION_TIMEOUT_MS = 10_000;
/** After a click or key press, how long to wait for a navigation it may have started. */
const SETTLE_MS = 3_000;
/** The most page content one call returns; the rest is read with start_from_char. */
export const MAX_CONTENT_CHARS = 30_000;

export async function navigate(session: BrowserSession, url: string, newTab: boolean): Promise<BrowserResult> {
  const page = newTab ? await session.newTab() : await session.currentPage();
  const target = /^[a-z][a-z0-9+.-]*:/i.test(url) ? url : `https://${url}`;
  const response = await page.goto(target, { waitUntil: 'domcontentloaded', timeout: NAVIGATION_TIMEOUT_MS });
  await settle(page);
  const status = response && response.status() >= 400 ? ` (HTTP ${response.status()})` : '';
  return { text: `Navigated to ${page.url()}${status}${newTab ? ` in new tab ${session.tabIdOf(page)}` : ''}. ${await pageLine(page)}` };
}

export async function click(session: BrowserSession, index: number, newTab: boolean): Promise<BrowserResult> {
  const page = await session.currentPage();
  const element = await elementAt(page, index);
  const href = newTab ? await linkTarget(page, element) : null;
  if (href) {
    const tab = await session.newTab();
    await tab.goto(href, { waitUntil: 'domcontentloaded', timeout: NAVIGATION_TIMEOUT_MS });
    return { text: `Opened the link of element ${index} in new tab ${session.tabIdOf(tab)}. ${await pageLine(tab)}` };
  }
  const before = new Set(page.context().pages());
  // The new tab of a target="_blank" link is reported a moment after the click, later still on a
  // loaded machine: such a click waits for it rather than finding it only if it came in time.
  const popup = (await opensNewTab(element)) ? page.waitForEvent('popup', { timeout: SETTLE_MS }).catch(() => undefined) : undefined;
  await element.click({ timeout: ACTION_TIMEOUT_MS });
  await settle(page);
  const opened = (await popup) ?? page.context().pages().find((candidate) => !before.has(candidate));
  if (opened) {
    await opened.waitForLoadState('domcontentloaded', { timeout: SETTLE_MS }).catch(() => undefined);
    session.select(opened);
    return { text: `Clicked element ${index}; it opened tab ${session.tabIdOf(opened)}, now the current tab. ${await pageLine(opened)}` };
  }
  return { text: `Clicked element ${index}. ${await pageLine(page)}` };
}

export async function typeText(session: BrowserSession, index: number, text: string): Promise<BrowserResult> {
  const page = await session.currentPage();
  const element = await elementAt(page, index);
  await element.fill(text, { timeout: ACTION_TIMEOUT_MS }).catch((error: Error) => {
    throw new BrowserActionError(`Element ${index} does not take text: ${firstLine(error.message)}`);
  });
  return { text: `Typed ${JSON.stringify(text)} into element ${index}.` };
}

export async function getState(session: BrowserSession, includeScreenshot: boolean): Promise<BrowserResult> {
  const page = await session.currentPage();
  const snapshot = (await page.evaluate(SNAPSHOT_SCRIPT)) as PageSnapshot;
  const state = {
    url: page.url(),
    title: await titleOf(page),
    tabs: (await session.tabs()).map(({ tab_id, url, title, current }) => ({ tab_id, url, title, ...(current ? { current } : {}) })),
    scroll: snapshot.scroll,
    interactive_elements: snapshot.elements,
    ...(snapshot.total > MAX_ELEMENTS ? { note: `Only the first ${MAX_ELEMENTS} of ${snapshot.total} interactive elements are numbered.` } : {}),
  };
  const text = JSON.stringify(state, null, 2);
  if (!includeScreenshot) return { text };
  return { text, screenshot: (await page.screenshot({ type: 'png', timeout: ACTION_TIMEOUT_MS })).toString('base64') };
}

export async function getContent(session: BrowserSession, extractLinks: boolean, startFromChar: number): Promise<BrowserResult> {
  const page = await session.currentPage();
  const markdown = (await page.evaluate(markdownScript(extractLinks))) as string;
  if (startFromChar > 0 && startFromChar >= markdown.length) {
    throw new BrowserActionError(`start_from_char ${startFromChar} is past the end of the content (${markdown.length} characters).`);
  }
  const end = Math.min(markdown.length, startFromChar + MAX_CONTENT_CHARS);
  const part = markdown.slice(startFromChar, end);
  const rest =
    end < markdown.length
      ? `\n\n[Content truncated: characters ${startFromChar}-${end} of ${markdown.length} shown. Call browser_get_content with start_from_char=${end} for more.]`
      : '';
  return { text: `${part}${rest}` };
}

export async function scroll(session: BrowserSession, direction: 'up' | 'down'): Promise<BrowserResult> {
  const page = await session.currentPage();
  const position = (await page.evaluate(scrollScript(direction === 'down'))) as { y: number; height: number; viewport: number };
  const where = position.y === 0 ? 'at the top' : position.y + position.viewport >= position.height - 1 ? 'at the bottom' : `${position.y} px from the top`;
  return { text: `Scrolled ${direction}; the view is ${where} of a ${position.height} px page.` };
}

export async function goBack(session: BrowserSession): Promise<BrowserResult> {
  const page = await session.currentPage();
  const before = page.url();
  // 'commit': a page restored from the back-forward cache fires no load events.
  const response = await page.goBack({ waitUntil: 'commit', timeout: NAVIGATION_TIMEOUT_MS });
  await settle(page);
  // goBack answers null both at the start of the history and for a step back within the document.
  if (response === null && page.url() === before) throw new BrowserActionError('This tab has no previous page to go back to.');
  return { text: `Went back. ${await pageLine(page)}` };
}

export async function listTabs(session: BrowserSession): Promise<BrowserResult> {
  return { text: JSON.stringify(await session.tabs(), null, 2) };
}

export async function switchTab(session: BrowserSession, tabId: string): Promise<BrowserResult> {
  const page = await tabPage(session, tabId);
  session.select(page);
  await page.bringToFront();
  return { text: `Switched to tab ${tabId}. ${await pageLine(page)}` };
}

export async function closeTab(session: BrowserSession, tabId: string): Promise<BrowserResult> {
  const page = await tabPage(session, tabId);
  await page.close();
  const current = await session.currentPage();
  return { text: `Closed tab ${tabId}. The current tab is ${session.tabIdOf(current)}: ${await pageLine(current)}` };
}

async function tabPage(session: BrowserSession, tabId: string): Promise<Page> {
  const tabs = await session.tabs();
  const page = session.pageOf(tabId.trim().toUpperCase());
  if (page === undefined) {
    throw new BrowserActionError(`No tab has the id ${JSON.stringify(tabId)}. Open tabs: ${tabs.map((tab) => tab.tab_id).join(', ')}.`);
  }
  return page;
}

/** The element a snapshot numbered `index`, or an error telling the agent to take a new snapshot. */
async function elementAt(page: Page, index: number): Promise<Locator> {
  const element = page.locator(`[${INDEX_ATTRIBUTE}="${index}"]`);
  if ((await element.count()) === 0) {
    throw new BrowserActionError(`No element has index ${index} on this page. Call browser_get_state for the current elements and their indices.`);
  }
  return element.first();
}

/** Whether clicking the element follows a link or submits a form into another browsing context. */
async function opensNewTab(element: Locator): Promise<boolean> {
  return element
    .evaluate((node) => {
      const target = node.closest('a[target], area[target], form[target]')?.getAttribute('target')?.toLowerCase();
      return target !== undefined && target !== '' && !['_self', '_parent', '_top'].includes(target);
    })
    .catch(() => false);
}

/** A link's absolute target, or null when the element is not a link. */
async function linkTarget(page: Page, element: Locator): Promise<string | null> {
  const href = await element.getAttribute('href');
  if (!href || href.startsWith('javascript:')) return null;
  try {
    return new URL(href, page.url()).href;
  } catch {
    return null;
  }
}

/** Waits briefly for a load an action may have started; a page that keeps loading is not waited for. */
async function settle(page: Page): Promise<void> {
  await page.waitForLoadState('load', { timeout: SETTLE_MS }).catch(() => undefined);
}

async function pageLine(page: Page): Promise<string> {
  const title = await titleOf(page);
  return `Page: ${page.url()}${title ? ` (${title})` : ''}`;
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}
