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
import { CHROMIUM, CHROMIUM_ARGS } from '../support/chromium.js';

const unavailable = existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is missing (Debian's chromium package)`;
if (unavailable) console.warn(`test/e2e/docs-anchors.test.ts skipped: ${unavailable}`);

const description: string = parse(readFileSync('spec/openapi.yaml', 'utf8')).info.description;
const anchors = [...description.matchAll(/<a id="([^"]+)"><\/a>/g)].map((match) => match[1]!);

const app = useTestApp();

it.skipIf(unavailable)(
  'renders every anchor of the error and signaling documentation on /docs',
  async () => {
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
  },
  30_000,
);

// The signaling contract's messages, from the contract itself (components/messages and the channels'
// own), by name: each has the anchor `signaling-<name with dots as dashes>` on /docs.
const asyncapi = parse(readFileSync('spec/asyncapi.yaml', 'utf8'));
const messageNames = [
  ...new Set<string>([
    ...Object.entries(asyncapi.components?.messages ?? {}).map(([key, m]: [string, any]) => m.name ?? key),
    ...Object.values(asyncapi.channels ?? {}).flatMap((channel: any) =>
      Object.entries(channel.messages ?? {})
        .filter(([, m]: [string, any]) => !m.$ref)
        .map(([key, m]: [string, any]) => m.name ?? key),
    ),
  ]),
];
const messageAnchors = messageNames.map((name) => `signaling-${name.replaceAll('.', '-')}`);

it.skipIf(unavailable)(
  'renders the signaling contract on /docs with an anchor per message, no console error and no CSP violation',
  async () => {
    expect(messageNames.length).toBeGreaterThan(0);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    try {
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error' || /content security policy/i.test(message.text()))
          problems.push(`console: ${message.text()} (${message.location().url})`);
      });
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      // Counted by the page itself: a blocked script or style is a securitypolicyviolation event.
      await page.addInitScript(() => {
        const g = globalThis as any;
        g.cspViolations = [];
        g.document.addEventListener('securitypolicyviolation', (e: any) => g.cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`));
      });
      await page.goto(`${app.url}/docs`);
      // Swagger UI draws above the signaling section (wait for it, so the links stay put while clicked
      // and its errors are counted too)
      await page.waitForSelector('#error-not_found', { state: 'attached', timeout: 15_000 });
      // reachable from the page's own navigation, not only by typing the anchor
      await page.click('a[href="#signaling-reference"]');
      await page.waitForURL((url) => url.hash === '#signaling-reference', { timeout: 5_000 });
      // every link in the signaling section leads to an anchor on the page or to the served contract
      const dangling = await page.evaluate(() =>
        [...(globalThis as any).document.querySelectorAll('#signaling-reference a[href^="#"]')]
          .map((a: any) => a.getAttribute('href').slice(1))
          .filter((id: string) => (globalThis as any).document.getElementById(id) === null),
      );
      expect(dangling).toEqual([]);
      const missing = await page.evaluate((ids) => ids.filter((id) => (globalThis as any).document.getElementById(id) === null), messageAnchors);
      expect(missing).toEqual([]);
      // an error body's or a client's link straight to a message lands on it
      const last = messageAnchors.at(-1)!;
      await page.goto(`${app.url}/docs#${last}`);
      await page.waitForSelector('#error-not_found', { state: 'attached', timeout: 15_000 });
      expect(await page.evaluate(() => (globalThis as any).document.querySelector(':target')?.id)).toBe(last);
      const json = await page.evaluate(async () => (await fetch('/v1/asyncapi.json')).json());
      expect(json).toEqual(asyncapi);
      expect(await page.evaluate(() => (globalThis as any).cspViolations)).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  },
  30_000,
);
