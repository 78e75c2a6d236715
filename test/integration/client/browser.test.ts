/**
 * The typed signaling client in a real browser (headless Chromium through playwright-core): its
 * modules, transpiled one by one as they are (no bundler, so nothing of Node may be in them), are
 * served to a page of the app's origin, which opens the socket with the browser's own WebSocket,
 * joins, starts a countdown with a typed command and awaits `started` and `stopped`; a used ticket
 * is refused with what a browser can know. Every frame the page got is checked against the contract.
 * Skips with the reason when /usr/bin/chromium is missing (Debian's chromium; .ci/run installs it).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { chromium, type Browser } from 'playwright-core';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkServerFrame } from '../../../src/client/signaling-contract.js';
import { startTicket } from '../../support/signaling-client.js';
import { insertRoom, useSignalingApp } from '../../support/signaling.js';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
/** The client's modules a browser loads (the types module is imported for types only, so never loaded). */
const MODULES = ['signaling.js', 'signaling-connection.js', 'signaling-delivery.js', 'signaling-opening.js', 'signaling-errors.js', 'signaling-reconnect.js'];

const unavailable = existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is missing (Debian's chromium package)`;
if (unavailable) console.warn(`test/integration/client/browser.test.ts skipped: ${unavailable}`);

/** The module as a browser gets it: the TypeScript source with the types stripped, nothing bundled. */
async function transpiled(name: string): Promise<string> {
  const source = await readFile(new URL(`../../../src/client/${name.replace(/\.js$/, '.ts')}`, import.meta.url), 'utf8');
  return ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true } }).outputText;
}

/** What the page reports: the accepted protocol, the answers it awaited, and every frame it got. */
interface PageRun {
  protocol: string;
  joined: string;
  stoppedKind: string;
  frames: unknown[];
  refusal: { name: string; status: unknown; message: string };
}

/**
 * Runs in the page (serialised by playwright: it uses nothing from this module). The client module
 * is on `globalThis.convene`.
 */
async function runInPage({ url, ticket }: { url: string; ticket: string }): Promise<PageRun> {
  const client = (globalThis as any).convene;
  const connection = await client.connectSignaling({ url, ticket, protocol: 'opentalk-signaling-json-v1.0' });
  const frames: unknown[] = [];
  connection.onFrame((frame: unknown) => frames.push(frame));
  const answer = await connection.join('Browser', { timeoutMs: 3_000 });
  const started = connection.next('timer', 'started', { timeoutMs: 3_000 });
  const stopped = connection.next('timer', 'stopped', { timeoutMs: 3_000 });
  connection.send('timer', { action: 'start', kind: 'countdown', duration: 1, enable_ready_check: false });
  await started;
  const { payload } = await stopped;
  await connection.close();
  // the ticket is used now: the browser sees only that the socket closed before it opened
  const refusal = await client.connectSignaling({ url, ticket }).catch((err: any) => ({ name: err.name, status: err.status ?? null, message: err.message }));
  return { protocol: connection.protocol, joined: answer.result, stoppedKind: payload.kind, frames, refusal };
}

describe.skipIf(unavailable !== undefined)('the typed signaling client in a real browser', () => {
  const app = useSignalingApp();
  let browser: Browser;

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  afterAll(() => browser?.close());

  it('joins, starts a countdown, sees it run out, and reports a used ticket', async () => {
    const owner = await app.login('owner');
    const roomId = await insertRoom(app, owner);
    const { ticket } = await startTicket(app, { roomId, token: owner.accessToken });
    const modules = new Map(await Promise.all(MODULES.map(async (name) => [name, await transpiled(name)] as const)));

    const page = await browser.newPage();
    try {
      await page.route(`${app.url}/client/*`, (route) => {
        const body = modules.get(new URL(route.request().url()).pathname.replace('/client/', ''));
        return body === undefined ? route.fulfill({ status: 404 }) : route.fulfill({ status: 200, contentType: 'text/javascript', body });
      });
      await page.goto(`${app.url}/health`);
      await page.addScriptTag({ type: 'module', content: "import * as convene from '/client/signaling.js'; globalThis.convene = convene;" });
      await page.waitForFunction(() => (globalThis as any).convene !== undefined, undefined, { timeout: 3_000 });

      // the page's origin, given as http: the client turns it into ws://…/signaling
      const run = await page.evaluate(runInPage, { url: app.url, ticket });
      expect(run).toMatchObject({ protocol: 'opentalk-signaling-json-v1.0', joined: 'join_success', stoppedKind: 'expired' });
      expect(run.refusal.name).toBe('SignalingConnectError');
      expect(run.refusal.status).toBeNull();
      expect(run.refusal.message).toMatch(/^the socket closed \(1006\) before it opened: the server refused it/);
      for (const frame of run.frames) checkServerFrame(frame);
      expect(run.frames.map((frame: any) => `${frame.namespace} ${frame.payload.message}`)).toEqual(['control join_success', 'timer started', 'timer stopped']);
    } finally {
      await page.close();
    }
  });
});
