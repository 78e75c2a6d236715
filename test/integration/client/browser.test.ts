/**
 * The typed signaling client in a real browser (headless Chromium through playwright-core): its
 * modules, transpiled one by one as they are (no bundler, so nothing of Node may be in them), are
 * served to a page of the app's origin, which opens the socket with the browser's own WebSocket,
 * joins, starts a countdown with a typed command and awaits `started` and `stopped`; a used ticket
 * is refused with what a browser can know. Every frame the page got is checked against the contract.
 * A second page starts through the typed HTTP client (openapi-fetch served as it is, through an
 * import map) with reconnect on; its socket goes through a TCP relay that cuts it, and the browser's
 * WebSocket comes back as the same participant.
 * Skips with the reason when /usr/bin/chromium is missing (Debian's chromium; .ci/run installs it).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkServerFrame } from '../../../packages/client/src/signaling-contract.js';
import { startTicket } from '../../support/signaling-client.js';
import { freshSource, insertRoom, useSignalingApp } from '../../support/signaling.js';
import { tcpCut } from '../../support/tcp-cut.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../../support/chromium.js';

/** The client's modules a browser loads (the types module is imported for types only, so never loaded). */
const MODULES = [
  'signaling.js',
  'signaling-connection.js',
  'signaling-delivery.js',
  'signaling-opening.js',
  'signaling-errors.js',
  'signaling-reconnect.js',
  'http.js',
];
/** openapi-fetch as published (one ES module without imports), which http.js imports by its bare name. */
const OPENAPI_FETCH = fileURLToPath(import.meta.resolve('openapi-fetch'));

const unavailable = existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is missing (Debian's chromium package)`;
if (unavailable) console.warn(`test/integration/client/browser.test.ts skipped: ${unavailable}`);

/** The module as a browser gets it: the TypeScript source with the types stripped, nothing bundled. */
async function transpiled(name: string): Promise<string> {
  const source = await readFile(new URL(`../../../packages/client/src/${name.replace(/\.js$/, '.ts')}`, import.meta.url), 'utf8');
  return ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true } })
    .outputText;
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

/** What the reconnecting page reports: its connection events, summarised, and its frames. */
interface ReconnectRun {
  events: Array<{ type: string; attempt?: number; cause?: string; resumed?: boolean; id?: string; reason?: string }>;
  frames: string[];
}

/** Runs in the page: starts with reconnect on and joins; the session stays on `globalThis.session`. */
async function startInPage({ api, url, roomId, token, source }: { api: string; url: string; roomId: string; token: string; source: string }): Promise<string> {
  const client = (globalThis as any).convene;
  // every request from one fresh address: the start's limits count per address, in Redis across runs
  const fetchFrom = (input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input, init);
    request.headers.set('x-forwarded-for', source);
    return fetch(request);
  };
  const http = client.createHttpClient({ baseUrl: api, token, fetch: fetchFrom });
  const connection = await client.startSignaling(http, { url, roomId, reconnect: { initialDelayMs: 20, maxDelayMs: 100, maxAttempts: 100 } });
  const session = { connection, events: [] as unknown[], frames: [] as string[] };
  connection.onConnectionEvent((event: any) => {
    const cause =
      event.cause === undefined ? undefined : event.cause instanceof Error ? `${event.cause.name} ${event.cause.code}` : `close ${event.cause.code}`;
    session.events.push({ type: event.type, attempt: event.attempt, cause, resumed: event.resumed, id: event.join?.frame.payload.id, reason: event.reason });
  });
  connection.onFrame((frame: any) => session.frames.push(`${frame.namespace} ${frame.payload.message}`));
  (globalThis as any).session = session;
  const answer = await connection.join('Browser', { timeoutMs: 3_000 });
  return answer.frame.payload.id;
}

/** Runs in the page once `reconnected` came: a countdown's `started` on the new socket, then the report. */
async function afterReconnect(): Promise<ReconnectRun> {
  const { connection, events, frames } = (globalThis as any).session;
  const started = connection.next('timer', 'started', { timeoutMs: 3_000 });
  connection.send('timer', { action: 'start', kind: 'stopwatch', enable_ready_check: false });
  await started;
  await connection.close(); // its `disconnected` ends the events
  return { events, frames };
}

describe.skipIf(unavailable !== undefined)('the typed signaling client in a real browser', () => {
  const app = useSignalingApp();
  let browser: Browser;

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  afterAll(() => browser?.close());

  /** A page of the app's origin with the client's modules on `globalThis.convene`. */
  async function clientPage(): Promise<Page> {
    const modules = new Map(await Promise.all(MODULES.map(async (name) => [name, await transpiled(name)] as const)));
    modules.set('openapi-fetch.js', await readFile(OPENAPI_FETCH, 'utf8'));
    const page = await browser.newPage();
    await page.route(`${app.url}/client/*`, (route) => {
      const body = modules.get(new URL(route.request().url()).pathname.replace('/client/', ''));
      return body === undefined ? route.fulfill({ status: 404 }) : route.fulfill({ status: 200, contentType: 'text/javascript', body });
    });
    await page.goto(`${app.url}/health`);
    await page.addScriptTag({ type: 'importmap', content: JSON.stringify({ imports: { 'openapi-fetch': '/client/openapi-fetch.js' } }) });
    await page.addScriptTag({
      type: 'module',
      content:
        "import * as signaling from '/client/signaling.js'; import { createHttpClient } from '/client/http.js'; globalThis.convene = { ...signaling, createHttpClient };",
    });
    await page.waitForFunction(() => (globalThis as any).convene !== undefined, undefined, { timeout: 3_000 });
    return page;
  }

  it('joins, starts a countdown, sees it run out, and reports a used ticket', async () => {
    const owner = await app.login('owner');
    const roomId = await insertRoom(app, owner);
    const { ticket } = await startTicket(app, { roomId, token: owner.accessToken });

    const page = await clientPage();
    try {
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

  it('reconnects after its socket was cut, as the same participant, retrying session_running while the server still holds the session', async () => {
    const owner = await app.login('owner');
    const roomId = await insertRoom(app, owner);
    const relay = await tcpCut(app.url);
    const page = await clientPage();
    try {
      const id = await page.evaluate(startInPage, { api: `${app.url}/v1`, url: relay.url, roomId, token: owner.accessToken, source: freshSource() });
      relay.cut({ holdServerSide: true });
      const events = () => page.evaluate(() => (globalThis as any).session.events.length as number);
      await expect.poll(events, { timeout: 5_000 }).toBeGreaterThanOrEqual(3);
      relay.release();
      await expect.poll(() => page.evaluate(() => (globalThis as any).session.events.at(-1).type as string), { timeout: 5_000 }).toBe('reconnected');

      const run = await page.evaluate(afterReconnect);
      const retries = run.events.slice(0, -2);
      expect(run.events.map((event) => event.type)).toEqual([...retries.map(() => 'reconnecting'), 'reconnected', 'disconnected']);
      // the browser sees the cut connection as 1006; then the server answers session_running until it lets go
      expect(retries[0]?.cause).toBe('close 1006');
      expect(retries[1]?.cause).toBe('SignalingStartError session_running');
      expect(run.events.at(-2)).toEqual({ type: 'reconnected', attempt: retries.length, resumed: true, id });
      expect(run.events.at(-1)).toEqual({ type: 'disconnected', reason: 'closed_by_client' });
      expect(run.frames).toEqual(['control join_success', 'control join_success', 'timer started']);
    } finally {
      await page.close();
      await relay.close();
    }
  });
});
