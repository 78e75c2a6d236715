/**
 * What the media tests (test/media/) share: a participant as a headless Chromium page joined to a
 * room (test/support/media-page.ts speaks the protocol in it), polling its page until something
 * holds, checking that a stream is received (bytes and decoded frames rising), and talking to a
 * Janus videoroom with Convene's own client (src/media/janus/connection.ts).
 *
 *   const alice = await joinPage(browser, app.url, 'alice', ticket);
 *   await publishFrom(alice.page, 'alice', 'video');
 *   await receiving(bob, `${aliceId}:video`);
 *   await until(alice, (snapshot) => framesOf(snapshot, 'control', 'left').length > 0);
 *   const { participants } = await videoroom(janus.url, { request: 'listparticipants', room });
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { pino } from 'pino';
import { expect } from 'vitest';
import { DEFAULT_SIGNALING_PROTOCOL, signalingUrl } from '../../packages/client/src/signaling.js';
import { JanusConnection } from '../../src/media/janus/connection.js';
import { installMediaClient, openParticipant, publishFrom, snapshotOf, type MediaSnapshot } from './media-page.js';
import { startTicket, type Starter } from './signaling-client.js';
import type { TestApp } from './test-app.js';

/** Long enough for ICE, DTLS and the first key frames on a loaded machine; the checks poll, they do not sleep. */
export const MEDIA_TIMEOUT = 30_000;

export interface Participant {
  name: string;
  page: Page;
  context: BrowserContext;
}

/**
 * A participant in a browser context of its own (as separate people are), its socket opened with
 * `ticket` on the Convene at `baseUrl` and joined; resolves once it has its participant id.
 */
export async function joinPage(browser: Browser, baseUrl: string, name: string, ticket: string): Promise<Participant> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${baseUrl}/health`); // a secure origin (loopback http) for getUserMedia
  await page.evaluate(installMediaClient);
  await openParticipant(page, name, signalingUrl(baseUrl), [DEFAULT_SIGNALING_PROTOCOL, `ticket#${ticket}`], name);
  const participant = { name, page, context };
  await until(participant, (snapshot) => snapshot.id !== undefined);
  return participant;
}

/** The participant's id in the room (known once joinPage resolved). */
export const idOf = async (participant: Participant): Promise<string> => (await snapshotOf(participant.page, participant.name)).id!;

export function sendMedia(participant: Participant, payload: object): Promise<void> {
  return participant.page.evaluate(([name, p]) => (globalThis as any).convene[name].sendMedia(p), [participant.name, payload] as const);
}

/** Polls the participant's page until `check` holds; answers that snapshot. */
export async function until(participant: Participant, check: (snapshot: MediaSnapshot) => boolean): Promise<MediaSnapshot> {
  let last: MediaSnapshot | undefined;
  await eventually(async () => {
    last = await snapshotOf(participant.page, participant.name);
    expect(check(last), `${participant.name}: ${last.frames.slice(-5).join('\n')}`).toBe(true);
  });
  return last!;
}

/** The stream's audio and video bytes and its decoded frames rise (two readings apart), on the participant's page. */
export async function receiving(participant: Participant, stream: string): Promise<void> {
  const first = await until(participant, (snapshot) => (snapshot.inbound[stream]?.framesDecoded ?? 0) > 0);
  const before = first.inbound[stream]!;
  await until(participant, (snapshot) => {
    const now = snapshot.inbound[stream];
    const audioRises = stream.endsWith(':screen') || (now?.audioBytes ?? 0) > before.audioBytes;
    return now !== undefined && now.videoBytes > before.videoBytes && now.framesDecoded > before.framesDecoded && audioRises;
  });
}

export async function eventually(check: () => Promise<void>, timeoutMs = MEDIA_TIMEOUT): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/**
 * One videoroom request (`list`, `exists`, `listparticipants` …) to the Janus at `url`, on a
 * connection and session of its own that are closed after it. (Convene makes its rooms private:
 * `list` does not show them, `exists` and `listparticipants` do.)
 */
export async function videoroom(url: string, body: Record<string, unknown>): Promise<Record<string, any>> {
  const connection = new JanusConnection({ url, logger: pino({ level: 'silent' }) });
  try {
    await connection.connect();
    const handle = await connection.attach(() => undefined);
    return (await handle.request(body)).data;
  } finally {
    await connection.close();
  }
}

/**
 * The pages a test file opens, each tracked until it leaves, so that `afterAll` can close what a
 * failed test left open: `join` starts a ticket on the instance and opens a page with it.
 */
export function pagesOf(browser: () => Browser) {
  const opened: Participant[] = [];
  return {
    async join(on: TestApp, name: string, starter: Starter): Promise<Participant> {
      const { ticket } = await startTicket(on, starter);
      const participant = await joinPage(browser(), on.url, name, ticket);
      opened.push(participant);
      return participant;
    },
    async leave(participant: Participant): Promise<void> {
      await participant.context.close();
      opened.splice(opened.indexOf(participant), 1);
    },
    closeAll: () => Promise.all(opened.splice(0).map((participant) => participant.context.close().catch(() => undefined))),
  };
}

/** Both publish camera and microphone and each receives the other's: answers their ids. */
export async function seeEachOther(alice: Participant, bob: Participant): Promise<{ aliceId: string; bobId: string }> {
  const [aliceId, bobId] = await Promise.all([idOf(alice), idOf(bob)]);
  await publishFrom(alice.page, alice.name, 'video');
  await publishFrom(bob.page, bob.name, 'video');
  await receiving(alice, `${bobId}:video`);
  await receiving(bob, `${aliceId}:video`);
  return { aliceId, bobId };
}
