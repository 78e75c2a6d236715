/**
 * The `documentation_url` of every error body points at `/docs#<anchor>`; the anchors live in the
 * contract's description, which Swagger UI renders (and may sanitise) in the browser. This opens
 * /docs in headless Chromium and checks that every anchor the description declares, the signaling
 * section's included, is on the rendered page. (test/contract/openapi.test.ts checks that every code
 * the service answers with has its anchor in the description.) The page is served under a Content
 * Security Policy (src/http/docs.ts): it must render all the same, with no violation reported.
 */
import { existsSync, readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { parse } from 'yaml';
import { expect, it } from 'vitest';
import { useTestApp } from '../support/test-app.js';

const CHROMIUM = '/usr/bin/chromium';
// without the background-networking flags Chromium's own outgoing connections fail on a closed network
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

const unavailable = existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is missing (Debian's chromium package)`;
if (unavailable) console.warn(`test/e2e/docs-anchors.test.ts skipped: ${unavailable}`);

const description: string = parse(readFileSync('spec/openapi.yaml', 'utf8')).info.description;
const anchors = [...description.matchAll(/<a id="([^"]+)"><\/a>/g)].map((match) => match[1]!);

const app = useTestApp();

it.skipIf(unavailable)('renders every anchor of the error and signaling documentation on /docs', async () => {
  expect(anchors).toContain('signaling');
  expect(anchors).toContain('error-not_found');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage();
    // the page runs under its Content Security Policy: anything the policy blocks is reported here
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    const response = await page.goto(`${app.url}/docs#error-not_found`);
    expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.waitForSelector('#error-not_found', { state: 'attached', timeout: 15_000 });
    const missing = await page.evaluate((ids) => ids.filter((id) => (globalThis as any).document.getElementById(id) === null), anchors);
    expect(missing).toEqual([]);
    expect(violations).toEqual([]);
  } finally {
    await browser.close();
  }
}, 30_000);
