/**
 * The contract's `webhooks` (issue 20) rendered on /docs: Swagger UI draws OpenAPI 3.1 webhooks in a
 * section of their own; this opens /docs in headless Chromium and checks that every event type's
 * entry is on the page, under the page's Content Security Policy, with no violation.
 */
import { existsSync, readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { parse } from 'yaml';
import { expect, it } from 'vitest';
import { useTestApp } from '../support/test-app.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../support/chromium.js';

const unavailable = existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is missing (Debian's chromium package)`;
if (unavailable) console.warn(`test/e2e/docs-webhooks.test.ts skipped: ${unavailable}`);

const webhooks = Object.keys(parse(readFileSync('spec/openapi.yaml', 'utf8')).webhooks ?? {});

const app = useTestApp();

it.skipIf(unavailable)(
  'lists every webhook of the contract on /docs',
  async () => {
    expect(webhooks).toHaveLength(12);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    try {
      const page = await browser.newPage();
      const violations: string[] = [];
      page.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
      });
      await page.goto(`${app.url}/docs`);
      await page.waitForSelector('#error-not_found', { state: 'attached', timeout: 15_000 });
      const text: string = await page.evaluate(() => (globalThis as any).document.getElementById('swagger-ui').innerText);
      expect(text).toContain('Webhooks');
      const missing = webhooks.filter((name) => !text.includes(name));
      expect(missing).toEqual([]);
      expect(violations).toEqual([]);
    } finally {
      await browser.close();
    }
  },
  30_000,
);
