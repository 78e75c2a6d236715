/**
 * Several Janus servers behind one Convene instance (`[media] janus_urls` with two test Janus,
 * test/support/janus.ts), and a Janus that is down when Convene starts. Participants are headless
 * Chromium pages (test/support/media-page.ts).
 *
 * Rooms are spread: a room's first publish pins it to the least busy server (fewest handles of this
 * instance), and the room stays there (a later publisher joins it on the same server, though the
 * other is less busy). Janus A killed: the participants of its room get `webrtc_down`, the room on B
 * goes on (its subscriber still decodes frames), `/ready` says `media: up`, and the next publish in
 * the room that was on A moves it to B, where media flows again. A Janus that does not answer at
 * Convene's start is logged plainly and `/ready` says `media: down`; once it comes up, `up`, and a
 * call works.
 *
 * Skips, with the reason printed, when Chromium or Janus is missing or network namespaces cannot be
 * made (not root). Uses Redis for the media store when REDIS_URL is set.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, CHROMIUM_ARGS } from '../support/chromium.js';
import { insertInvite, insertRoom } from '../support/invites.js';
import { janusUnavailable, startJanus, type TestJanus } from '../support/janus.js';
import { startLoggedApp } from '../support/logged-app.js';
import { eventually, idOf, pagesOf, receiving, until } from '../support/media-call.js';
import { framesOf, MEDIA_CHROMIUM_ARGS, publishFrom } from '../support/media-page.js';
import type { Starter } from '../support/signaling-client.js';
import { redisUrl, UNCAPPED } from '../support/signaling.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

const unavailable = !existsSync(CHROMIUM) ? `${CHROMIUM} is missing (Debian's chromium package)` : janusUnavailable;
if (unavailable) console.warn(`test/media/media-servers.test.ts skipped: ${unavailable}`);

const shared = redisUrl ? { redis: { url: redisUrl } } : {};

describe.skipIf(unavailable !== undefined)('media over several Janus servers', () => {
  let janusA: TestJanus;
  let janusB: TestJanus;
  let browser: Browser;
  const { join, closeAll } = pagesOf(() => browser);

  beforeAll(async () => {
    [janusA, janusB] = await Promise.all([startJanus(), startJanus()]);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, ...MEDIA_CHROMIUM_ARGS] });
  }, 60_000);

  afterAll(async () => {
    await closeAll();
    await browser?.close();
    await Promise.all([janusA?.close(), janusB?.close()]);
  });

  /** A room of the owner's: the owner's starter and a guest's. */
  async function room(app: TestApp): Promise<{ owner: Starter; guest: Starter }> {
    const owner = await app.login('owner');
    const roomId = await insertRoom(app, owner);
    return { owner: { roomId, token: owner.accessToken }, guest: { roomId, inviteCode: await insertInvite(app, roomId, owner) } };
  }

  /** The displays (`<participant>|<type>`) of the publishers on a Janus. */
  const publishersOn = async (janus: TestJanus) => (await janus.publishers()).map((publisher) => publisher.display).sort();

  const mediaStatus = async (app: TestApp) => JSON.parse((await app.request('GET', '/ready')).text_).media as string;

  it('spreads rooms over the servers, keeps a room on its server, and moves it when its server is lost', async () => {
    const app = await startTestApp({ media: { janus_urls: [janusA.url, janusB.url] }, signaling_caps: UNCAPPED, ...shared });
    try {
      const first = await room(app);
      const alice = await join(app, 'alice', first.owner);
      const bob = await join(app, 'bob', first.guest);
      const [aliceId, bobId] = [await idOf(alice), await idOf(bob)];
      await publishFrom(alice.page, 'alice', 'video');
      await receiving(bob, `${aliceId}:video`);
      // the first room went to A (a tie goes to the first server); A holds its publisher and subscriber now
      expect(await publishersOn(janusA)).toEqual([`${aliceId}|video`]);

      const second = await room(app);
      const carol = await join(app, 'carol', second.owner);
      await publishFrom(carol.page, 'carol', 'video');
      const carolId = await idOf(carol);
      // the second room goes to B, the least busy
      await eventually(async () => expect(await publishersOn(janusB)).toEqual([`${carolId}|video`]));

      // B is less busy now (one handle against two), yet the first room stays on A
      await publishFrom(bob.page, 'bob', 'video');
      await receiving(alice, `${bobId}:video`);
      expect(await publishersOn(janusA)).toEqual([`${aliceId}|video`, `${bobId}|video`].sort());
      expect(await publishersOn(janusB)).toEqual([`${carolId}|video`]);
      const dave = await join(app, 'dave', second.guest);
      await receiving(dave, `${carolId}:video`);

      await janusA.stop();
      for (const [participant, source] of [
        [alice, aliceId],
        [bob, aliceId],
        [alice, bobId],
        [bob, bobId],
      ] as const) {
        await until(participant, (snapshot) => framesOf(snapshot, 'media', 'webrtc_down').some((frame) => frame.payload.source === source));
      }
      // the room on B is unaffected, and media is up while B is
      await receiving(dave, `${carolId}:video`);
      for (const participant of [carol, dave]) expect(framesOf(await until(participant, () => true), 'media', 'webrtc_down')).toEqual([]);
      expect(await mediaStatus(app)).toBe('up');

      // the next publish in the first room moves it to B, and media flows again there
      await publishFrom(alice.page, 'alice', 'video');
      await receiving(bob, `${aliceId}:video`);
      expect(await publishersOn(janusB)).toEqual([`${aliceId}|video`, `${carolId}|video`].sort());
    } finally {
      await closeAll();
      await app.close();
      if (!janusA.running) await janusA.start();
    }
  }, 120_000);

  it('says plainly when no Janus answers at its start, reports media down, and carries a call once Janus is up', async () => {
    const late = await startJanus();
    try {
      await late.stop();
      const app = await startLoggedApp({ media: { janus_urls: [late.url] }, signaling_caps: UNCAPPED, ...shared });
      try {
        expect(app.log()).toContain('media: no Janus server answers; audio and video are off until one does');
        expect(await mediaStatus(app)).toBe('down');

        await late.start();
        await eventually(async () => expect(await mediaStatus(app)).toBe('up'));
        const { owner, guest } = await room(app);
        const alice = await join(app, 'alice', owner);
        const bob = await join(app, 'bob', guest);
        await publishFrom(alice.page, 'alice', 'video');
        await receiving(bob, `${await idOf(alice)}:video`);
      } finally {
        await closeAll();
        await app.close();
      }
    } finally {
      await late.close();
    }
  }, 120_000);
});
