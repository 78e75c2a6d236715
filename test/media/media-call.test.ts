/**
 * A video call through Convene and a real Janus (Debian's `janus`, started by the test in a network
 * namespace of its own: test/support/janus.ts), between headless Chromium pages with a fake camera,
 * microphone and screen, each speaking the media protocol as the reference's web app does
 * (test/support/media-page.ts). Every frame a page got is checked against the contract.
 *
 * Skips, with the reason printed, when Chromium or Janus is missing or network namespaces cannot be
 * made (not root). .ci/run installs both and runs as root.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CHROMIUM, CHROMIUM_ARGS } from '../support/chromium.js';
import { insertInvite, insertRoom } from '../support/invites.js';
import { janusUnavailable, startJanus, type TestJanus } from '../support/janus.js';
import { eventually, idOf, pagesOf, receiving, seeEachOther, sendMedia, until } from '../support/media-call.js';
import { framesOf, ignoreForceMute, MEDIA_CHROMIUM_ARGS, publishFrom, snapshotOf, type MediaSnapshot } from '../support/media-page.js';
import { checkServerFrame, type Starter } from '../support/signaling-client.js';
import { redisUrl, UNCAPPED } from '../support/signaling.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

const unavailable = !existsSync(CHROMIUM) ? `${CHROMIUM} is missing (Debian's chromium package)` : janusUnavailable;
if (unavailable) console.warn(`test/media/media-call.test.ts skipped: ${unavailable}`);

describe.skipIf(unavailable !== undefined)('a video call through Janus', () => {
  let janus: TestJanus;
  let browser: Browser;
  let app: TestApp;
  const { join, leave, closeAll } = pagesOf(() => browser);

  beforeAll(async () => {
    janus = await startJanus();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, ...MEDIA_CHROMIUM_ARGS] });
    app = await startTestApp({ media: { janus_urls: [janus.url] }, signaling_caps: UNCAPPED, ...(redisUrl ? { redis: { url: redisUrl } } : {}) });
  }, 60_000);

  afterAll(async () => {
    await closeAll();
    await app?.close();
    await browser?.close();
    await janus?.close();
  });

  /**
   * A new room with its owner, alice (a moderator), and a guest, bob (on `bobApp`), both in; with
   * their ids, and the guest's starter for more guests.
   */
  async function aliceAndBob(bobApp: TestApp = app) {
    const owner = await app.login('owner');
    const roomId = await insertRoom(app, owner);
    const guest: Starter = { roomId, inviteCode: await insertInvite(app, roomId, owner) };
    const alice = await join(app, 'alice', { roomId, token: owner.accessToken });
    const bob = await join(bobApp, 'bob', guest);
    return { alice, bob, guest, aliceId: await idOf(alice), bobId: await idOf(bob) };
  }

  it('lets two participants see and hear each other, a third see both, and a screen reach everyone', async () => {
    const { alice, bob, guest, aliceId, bobId } = await aliceAndBob();
    await seeEachOther(alice, bob);

    const carol = await join(app, 'carol', guest);
    await receiving(carol, `${aliceId}:video`);
    await receiving(carol, `${bobId}:video`);

    // the moderator (the room's owner) shares a screen: the others receive it as its own stream
    await publishFrom(alice.page, 'alice', 'screen');
    await receiving(bob, `${aliceId}:screen`);
    await receiving(carol, `${aliceId}:screen`);

    for (const participant of [alice, bob, carol]) expectCleanFrames(await snapshotOf(participant.page, participant.name));
    await Promise.all([alice, bob, carol].map(leave));
    // every handle released: the Janus session of this instance holds none
    await eventually(async () => expect(await janus.handles()).toEqual([]));
  }, 120_000);

  it('lets a subscriber choose the simulcast layer, pause the video, and restart ICE on its subscription', async () => {
    const { alice, bob, aliceId } = await aliceAndBob();
    const stream = `${aliceId}:video`;
    await publishFrom(alice.page, 'alice', 'video');
    await receiving(bob, stream);
    const configure = (configuration: object) => sendMedia(bob, { action: 'configure', target: aliceId, media_session_type: 'video', configuration });

    // the page publishes 640x480 in three layers (scaled 1, 1/2, 1/4; Chromium sends nothing on the
    // smallest at this size, and scales all down when its CPU is short); Janus forwards the one asked for
    // A switch waits for a key frame of the new layer, which Janus asks the publisher for; asked
    // right after the subscription started, Chromium may not send one (it throttles key frame
    // requests), so the choice is sent again every 2 s, as the web app sends its choices again.
    const switched = async (configuration: object, check: (width: number) => boolean): Promise<number> => {
      let width = 0;
      await eventually(async () => {
        await configure(configuration);
        const deadline = Date.now() + 2_000;
        do {
          width = (await snapshotOf(bob.page, 'bob')).inbound[stream]?.frameWidth ?? 0;
          if (width > 0 && check(width)) return;
          await new Promise((resolve) => setTimeout(resolve, 200));
        } while (Date.now() < deadline);
        throw new Error(`the video is still ${width} px wide after ${JSON.stringify(configuration)}`);
      });
      return width;
    };
    const low = await switched({ substream: 0 }, (width) => width <= 320);
    await switched({ substream: 2 }, (width) => width > low);

    await configure({ video: false });
    await eventually(async () => {
      const before = (await snapshotOf(bob.page, 'bob')).inbound[stream]!.videoBytes;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect((await snapshotOf(bob.page, 'bob')).inbound[stream]!.videoBytes).toBe(before);
    });
    await configure({ video: true });

    // an ICE restart: a new offer on the same subscription, answered by the page, and the video goes on
    const offers = (snapshot: MediaSnapshot) => framesOf(snapshot, 'media', 'sdp_offer').filter((frame) => frame.payload.source === aliceId).length;
    const offered = offers(await snapshotOf(bob.page, 'bob'));
    await sendMedia(bob, { action: 'resubscribe', target: aliceId, media_session_type: 'video' });
    await until(bob, (snapshot) => offers(snapshot) === offered + 1);
    await receiving(bob, stream);
    expectCleanFrames(await snapshotOf(bob.page, 'bob'));
    await Promise.all([alice, bob].map(leave));
  }, 120_000);

  it('carries a moderator mute to its target, and refuses a screen to a participant whose presenter role was revoked', async () => {
    const { alice, bob, aliceId, bobId } = await aliceAndBob();
    await publishFrom(bob.page, 'bob', 'video');
    await receiving(alice, `${bobId}:video`);

    await sendMedia(alice, { action: 'moderator_mute', targets: [bobId], force: true });
    const muted = await until(bob, (snapshot) => framesOf(snapshot, 'media', 'request_mute').length > 0);
    expect(framesOf(muted, 'media', 'request_mute')[0].payload).toEqual({ message: 'request_mute', issuer: aliceId, force: true });
    // the target muted itself (update_media_session): the others see its microphone off
    await until(alice, (snapshot) =>
      framesOf(snapshot, 'control', 'update').some((frame) => frame.payload.id === bobId && frame.payload.media?.video?.audio === false),
    );

    await sendMedia(alice, { action: 'revoke_presenter_role', participant_ids: [bobId] });
    await until(bob, (snapshot) => framesOf(snapshot, 'media', 'presenter_revoked').length > 0);
    await publishFrom(bob.page, 'bob', 'screen');
    const refused = await until(bob, (snapshot) => framesOf(snapshot, 'media', 'error').length > 0);
    const [first, ...rest] = framesOf(refused, 'media', 'error').map((frame) => frame.payload.error);
    expect(first).toBe('permission_denied');
    // the page's candidates for the refused offer, sent before the refusal arrived, name no stream of it
    expect(rest.filter((error) => error !== 'invalid_candidate' && error !== 'invalid_end_of_candidates')).toEqual([]);
    await Promise.all([alice, bob].map(leave));
  }, 120_000);

  it('switches a microphone off on Janus under force mute whatever its client does, and lets it on again after', async () => {
    const { alice, bob, aliceId, bobId } = await aliceAndBob();
    const stream = `${bobId}:video`;
    await ignoreForceMute(bob.page, 'bob');
    await publishFrom(bob.page, 'bob', 'video');
    await receiving(alice, stream);
    const audioStops = () =>
      eventually(async () => {
        const before = (await snapshotOf(alice.page, 'alice')).inbound[stream]!.audioBytes;
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        expect((await snapshotOf(alice.page, 'alice')).inbound[stream]!.audioBytes).toBe(before);
      });

    await sendMedia(alice, { action: 'moderator_enable_force_mute', allow_list: [aliceId] });
    await until(bob, (snapshot) => framesOf(snapshot, 'media', 'force_mute_enabled').length > 0);
    // bob's page keeps its microphone on and says nothing: Convene switched it off on Janus, and the others see it off
    await audioStops();
    await until(alice, (snapshot) =>
      framesOf(snapshot, 'control', 'update').some((frame) => frame.payload.id === bobId && frame.payload.media?.video?.audio === false),
    );
    await sendMedia(bob, { action: 'update_media_session', media_session_type: 'video', media_session_state: { audio: true, video: true } });
    await until(bob, (snapshot) => framesOf(snapshot, 'media', 'error').some((frame) => frame.payload.error === 'permission_denied'));
    await audioStops();

    await sendMedia(alice, { action: 'moderator_disable_force_mute' });
    await until(bob, (snapshot) => framesOf(snapshot, 'media', 'force_mute_disabled').length > 0);
    await sendMedia(bob, { action: 'update_media_session', media_session_type: 'video', media_session_state: { audio: true, video: true } });
    await receiving(alice, stream);
    await Promise.all([alice, bob].map(leave));
  }, 120_000);

  it('tells the participants when Janus is lost, goes on without it, and carries media again once it is back', async () => {
    const { alice, bob, aliceId } = await aliceAndBob();
    await publishFrom(alice.page, 'alice', 'video');
    await receiving(bob, `${aliceId}:video`);

    await janus.stop();
    await until(alice, (snapshot) => framesOf(snapshot, 'media', 'webrtc_down').some((frame) => frame.payload.source === aliceId));
    await until(bob, (snapshot) => framesOf(snapshot, 'media', 'webrtc_down').some((frame) => frame.payload.source === aliceId));
    // the stream is gone for the others, and the meeting itself goes on
    await until(bob, (snapshot) =>
      framesOf(snapshot, 'control', 'update').some((frame) => frame.payload.id === aliceId && frame.payload.media?.video === undefined),
    );
    expect((await app.request('GET', '/ready')).status).toBe(200);

    await janus.start();
    await eventually(async () => expect(JSON.parse((await app.request('GET', '/ready')).text_)).toMatchObject({ media: 'up' }));
    await publishFrom(alice.page, 'alice', 'video'); // the web app publishes again after its connection failed
    await receiving(bob, `${aliceId}:video`); // a new subscription: its counters start again
    await Promise.all([alice, bob].map(leave));
  }, 120_000);

  describe.skipIf(!redisUrl)('on two instances sharing Redis', () => {
    it('connects publishers whose sockets are on different instances', async () => {
      const second = await app.withConfig({ media: { janus_urls: [janus.url] }, signaling_caps: UNCAPPED, redis: { url: redisUrl! } });
      try {
        const { alice, bob } = await aliceAndBob(second);
        await seeEachOther(alice, bob);
        await Promise.all([alice, bob].map(leave));
        await eventually(async () => expect(await janus.handles()).toEqual([]));
      } finally {
        await second.close();
      }
    }, 120_000);
  });
});

/** Every frame fits the contract, and none is a media error. */
function expectCleanFrames(snapshot: MediaSnapshot): void {
  for (const text of snapshot.frames) {
    const frame: unknown = JSON.parse(text);
    expect(frame).not.toHaveProperty('pageError');
    checkServerFrame(frame);
  }
  expect(framesOf(snapshot, 'media', 'error')).toEqual([]);
}
