import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestApp } from '../sandbox-server/harness.js';

interface AppUnderTest {
  app: OpenAPIHono;
  /** OpenAPI paths the /docs page must list. */
  expectedPaths: string[];
  close(): Promise<void>;
}

/** The control plane's app, whose /docs page must list the sandbox routes. */
async function startAppUnderTest(): Promise<AppUnderTest> {
  const testApp = await openTestApp('pglite');
  return {
    app: testApp.app,
    expectedPaths: [
      '/api/v1/sandboxes',
      '/api/v1/sandboxes/search',
      '/api/v1/sandboxes/{id}/pause',
      '/api/v1/sandboxes/{id}/resume',
      '/api/v1/app-conversations',
    ],
    close: () => testApp.close(),
  };
}

const chromiumPath = [process.env.CHROMIUM_PATH, '/usr/bin/chromium'].find(
  (path): path is string => path !== undefined && existsSync(path),
);
const inCi = process.env.CI === 'true' || process.env.CI === '1';
// A developer without chromium is told and skipped; CI must never pass without running this.
const skip = chromiumPath === undefined && !inCi;
if (skip) {
  console.warn(
    '\n*** SKIPPED test/browser/docs.test.ts: chromium not found (apt-get install chromium, or set CHROMIUM_PATH) ***\n',
  );
}

function listen(app: OpenAPIHono): Promise<ServerType> {
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(server));
  });
}

describe.skipIf(skip)('/docs in headless Chromium', () => {
  let appUnderTest: AppUnderTest;
  let server: ServerType;
  let browser: Browser;

  beforeAll(async () => {
    if (chromiumPath === undefined) throw new Error('chromium is required in CI: install Debian\'s chromium package');
    appUnderTest = await startAppUnderTest();
    server = await listen(appUnderTest.app);
    browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await appUnderTest?.close();
  });

  it('renders the operations of the OpenAPI document from locally served assets', async () => {
    const { port } = server.address() as AddressInfo;
    const page = await browser.newPage();
    const failedRequests: string[] = [];
    page.on('requestfailed', (request) => failedRequests.push(request.url()));
    page.on('response', (response) => {
      if (response.status() >= 400) failedRequests.push(`${response.status()} ${response.url()}`);
    });

    await page.goto(`http://127.0.0.1:${port}/docs`);
    await page.locator('.opblock-summary-path').first().waitFor();
    const paths = await page.locator('.opblock-summary-path').evaluateAll((nodes) =>
      nodes.map((node) => node.getAttribute('data-path')),
    );

    expect(paths).toEqual(expect.arrayContaining(appUnderTest.expectedPaths));
    expect(failedRequests).toEqual([]);
  });
});
