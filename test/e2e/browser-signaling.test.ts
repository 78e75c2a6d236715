/**
 * `/signaling` from a real browser: headless Chromium (Debian's `chromium`, driven by
 * `playwright-core`) opens the socket as the reference's web app does, the ticket as an entry of the
 * subprotocol list (`new WebSocket(url, [protocol, 'ticket#…'])`), joins, and sees a countdown that its
 * own page started run out. A second participant in the same page (a guest with an invite code) sees
 * the same timer. This is what the `ws` tests cannot show: a browser's handshake (its header
 * formatting, `#` inside a protocol token, the protocol it accepts back) and its frames.
 *
 * Every frame the browser received is checked against the contract. When /usr/bin/chromium is
 * missing the test skips with the reason printed (.ci/run installs it when it runs as root).
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { checkServerFrame, signalingUrl, startTicket, type ServerFrame } from '../support/signaling-client.js';
import { insertInvite, insertRoom, useSignalingApp } from '../support/signaling.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../support/chromium.js';

/** The name the reference's web app offers (as its 2024 sources show); the server must echo it alone. */
const PROTOCOL = 'opentalk-signaling-json-v1.0';

const unavailable = existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is missing (Debian's chromium package)`;
if (unavailable) console.warn(`test/e2e/browser-signaling.test.ts skipped: ${unavailable}`);

/** A frame as the page received it: the raw text and the page's clock at arrival. */
interface Received {
  data: string;
  at: number;
}

/**
 * Runs in the page (serialised by playwright, so it uses nothing from this module): opens a socket,
 * sends `join` on open as the web app does, and keeps every frame under `signalingFrames[name]`.
 * Resolves with the protocol the browser accepted.
 */
function openInPage({ name, url, protocols, displayName }: { name: string; url: string; protocols: string[]; displayName: string }): Promise<string> {
  const window = globalThis as any;
  window.signalingFrames ??= {};
  window.signalingSockets ??= {};
  const frames: Received[] = (window.signalingFrames[name] = []);
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols);
    window.signalingSockets[name] = ws;
    ws.onmessage = (event) => frames.push({ data: typeof event.data === 'string' ? event.data : '(binary frame)', at: Date.now() });
    ws.onopen = () => {
      ws.send(JSON.stringify({ namespace: 'control', payload: { action: 'join', display_name: displayName } }));
      resolve(ws.protocol);
    };
    ws.onerror = () => reject(new Error(`the browser could not open the socket for ${name}`));
  });
}

/** Every frame `name`'s socket received so far, each checked against the contract. */
async function framesOf(page: Page, name: string): Promise<Array<ServerFrame & { at: number }>> {
  const received = await page.evaluate((of) => (globalThis as any).signalingFrames[of] as Received[], name);
  return received.map(({ data, at }) => {
    const frame: unknown = JSON.parse(data);
    checkServerFrame(frame);
    return Object.assign(frame, { at });
  });
}

/** Waits (in the page) until `name`'s socket has a `namespace` frame with `message`, and returns it. */
async function waitForFrame(page: Page, name: string, namespace: string, message: string, timeout = 3_000) {
  await page.waitForFunction(
    ({ of, ns, msg }) =>
      ((globalThis as any).signalingFrames[of] as Received[]).some(({ data }) => {
        const frame = JSON.parse(data);
        return frame.namespace === ns && frame.payload?.message === msg;
      }),
    { of: name, ns: namespace, msg: message },
    { timeout, polling: 20 },
  );
  const frames = await framesOf(page, name);
  return frames.find((frame) => frame.namespace === namespace && frame.payload.message === message)!;
}

describe.skipIf(unavailable !== undefined)('a real browser on /signaling', () => {
  const app = useSignalingApp();
  let browser: Browser;

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  afterAll(() => browser?.close());

  it('joins with the ticket in the protocol list and sees a countdown it started run out, as does a guest', async () => {
    const owner = await app.login('owner');
    const roomId = await insertRoom(app, owner);
    const inviteCode = await insertInvite(app, roomId, owner);
    const { ticket: ownerTicket } = await startTicket(app, { roomId, token: owner.accessToken });
    const { ticket: guestTicket } = await startTicket(app, { roomId, inviteCode });

    const page = await browser.newPage();
    try {
      // the app's own origin, so the handshake carries an Origin as a deployed web client's would
      await page.goto(`${app.url}/health`);
      const url = signalingUrl(app);

      // the order (protocol, then ticket) for the owner; the 2024 web app's (ticket first) for the guest
      const ownerProtocol = await page.evaluate(openInPage, { name: 'owner', url, protocols: [PROTOCOL, `ticket#${ownerTicket}`], displayName: 'Owner' });
      expect(ownerProtocol).toBe(PROTOCOL);
      const ownerJoined = await waitForFrame(page, 'owner', 'control', 'join_success');
      expect(ownerJoined.payload).toMatchObject({ display_name: 'Owner', role: 'moderator', is_room_owner: true });

      const guestProtocol = await page.evaluate(openInPage, { name: 'guest', url, protocols: [`ticket#${guestTicket}`, PROTOCOL], displayName: 'Guest' });
      expect(guestProtocol).toBe(PROTOCOL);
      const guestJoined = await waitForFrame(page, 'guest', 'control', 'join_success');
      expect(guestJoined.payload).toMatchObject({ display_name: 'Guest', role: 'guest', is_room_owner: false });
      expect(guestJoined.payload.participants.map((p: { id: string }) => p.id)).toEqual([ownerJoined.payload.id]);
      expect((await waitForFrame(page, 'owner', 'control', 'joined')).payload.id).toBe(guestJoined.payload.id);

      // the page itself starts the timer, with the fields the web app sends
      await page.evaluate(() =>
        (globalThis as any).signalingSockets.owner.send(
          JSON.stringify({
            namespace: 'timer',
            payload: { action: 'start', kind: 'countdown', duration: 1, title: 'Browser timer', style: 'normal', enable_ready_check: false },
          }),
        ),
      );

      const started = { owner: await waitForFrame(page, 'owner', 'timer', 'started'), guest: await waitForFrame(page, 'guest', 'timer', 'started') };
      const timer = started.owner.payload;
      expect(timer).toMatchObject({ kind: 'countdown', title: 'Browser timer', style: 'normal', ready_check_enabled: false });
      expect(Date.parse(timer.ends_at) - Date.parse(timer.started_at)).toBe(1_000);
      expect(started.guest.payload).toEqual(timer);

      for (const name of ['owner', 'guest'] as const) {
        const stopped = await waitForFrame(page, name, 'timer', 'stopped', 3_000);
        expect(stopped.payload).toEqual({ message: 'stopped', timer_id: timer.timer_id, kind: 'expired' });
        // the countdown ran its second: the server sent `expired` at the end (by its own clock, which a
        // timer may beat by a millisecond), and the page got it well after `started`, not with it (the
        // page's arrival times also carry delivery delays, which a loaded machine stretches)
        expect(Date.parse(stopped.timestamp)).toBeGreaterThanOrEqual(Date.parse(timer.ends_at) - 5);
        expect(stopped.at - started[name].at).toBeGreaterThanOrEqual(500);
      }

      // every frame each socket got (all checked against the contract by framesOf): join first, no errors, nothing else of the timer
      for (const name of ['owner', 'guest']) {
        const frames = await framesOf(page, name);
        expect(frames[0]!.payload.message).toBe('join_success');
        expect(frames.filter((frame) => frame.payload.message === 'error')).toEqual([]);
        expect(frames.filter((frame) => frame.namespace === 'timer').map((frame) => frame.payload.message)).toEqual(['started', 'stopped']);
      }
    } finally {
      await page.close();
    }
  });
});
