/**
 * The lockouts of issue 22, with the default limits (10 failures per source, 50 per target, in 5
 * minutes), on one instance and spread over two sharing Redis: strangers' failures refuse no holder
 * of a right secret, and the guessing stays bounded.
 *   - 50 random invite codes against one room from five addresses: the room's guests still start,
 *     and each of the five addresses is refused its 11th code.
 *   - 50 wrong room passwords from five addresses by one invitee: the room's other invitees and its
 *     guests still start with the right password; that invitee is refused from any address.
 *   - wrong pins through a call-in gateway (one address for all its callers): every room's right
 *     id and pin still start, until 50 wrong pins at one call-in id close that id (and only it).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { freshSource, redisUrl, startCallIn, startInvited, startRoom } from '../../support/signaling.js';
import { useTestApp, type TestApp } from '../../support/test-app.js';
import { createScene, expectTooMany, loginPair, PASSWORD, rateLimitedConfig, type Scene } from './guesses.js';

const limits = { window_seconds: 300, failures_per_source: 10, failures_per_target: 50 };
const ADDRESSES = 5;

const first = useTestApp(rateLimitedConfig(limits));
let second: TestApp | undefined;
beforeAll(async () => {
  if (redisUrl) second = await first.withConfig(rateLimitedConfig(limits));
});
afterAll(() => second?.close());

if (!redisUrl) console.log('REDIS_URL is not set: the lockout tests across two instances need Redis and are skipped in this run');

describe.each([
  { setting: 'on one instance', instances: () => [first] },
  { setting: 'spread over two instances', instances: () => [first, second!] },
])('$setting', ({ setting, instances }) => {
  const twoWithoutRedis = setting !== 'on one instance' && !redisUrl;
  /** The instance of the i-th request: each in turn. */
  const at = (i: number) => instances()[i % instances().length]!;
  let scene: Scene;
  beforeEach(async () => {
    if (!twoWithoutRedis) scene = await createScene(first, ...(await loginPair(first)));
  });

  /** `perAddress` wrong guesses from each of `ADDRESSES` fresh addresses (in turn over the instances); the addresses. */
  async function fromFiveAddresses(perAddress: number, wrong: (app: TestApp, source: string) => Promise<{ status: number }>, status: number) {
    const addresses = Array.from({ length: ADDRESSES }, () => freshSource());
    await Promise.all(
      addresses.map(async (source) => {
        for (let n = 0; n < perAddress; n++) expect((await wrong(at(n), source)).status).toBe(status);
      }),
    );
    return addresses;
  }

  it.skipIf(twoWithoutRedis)('50 random invite codes against a room from five addresses refuse none of its guests', async () => {
    const randomCode = (app: TestApp, source: string) => startInvited(app, scene.roomId, { invite_code: crypto.randomUUID(), password: PASSWORD }, source);
    const addresses = await fromFiveAddresses(limits.failures_per_source, randomCode, 404);
    for (const [i, app] of instances().entries()) {
      const guest = await startInvited(app, scene.roomId, { invite_code: scene.code, password: PASSWORD }, freshSource());
      expect(guest.status).toBe(200);
      // bounded: every one of the five addresses is refused its next code, at once and on every instance
      expectTooMany(await randomCode(app, addresses[i]!), 'start_invited_room', limits.window_seconds);
    }
  });

  it.skipIf(twoWithoutRedis)("50 wrong room passwords from five addresses refuse none of the room's other invitees and guests", async () => {
    const wrongPassword = (app: TestApp, source: string) =>
      startRoom(app, scene.roomId, { token: scene.invitee.accessToken, body: { password: 'wrong' }, source });
    const addresses = await fromFiveAddresses(limits.failures_per_source, wrongPassword, 401);
    for (const app of instances()) {
      const other = { token: scene.otherInvitee.accessToken, body: { password: PASSWORD }, source: freshSource() };
      expect((await startRoom(app, scene.roomId, other)).status).toBe(200);
      const guest = await startInvited(app, scene.roomId, { invite_code: scene.code, password: PASSWORD }, freshSource());
      expect(guest.status).toBe(200);
      // bounded: the invitee who guessed has used its budget in this room, from any address, and each address its own
      const guesser = { token: scene.invitee.accessToken, body: { password: PASSWORD }, source: freshSource() };
      expectTooMany(await startRoom(app, scene.roomId, guesser), 'start_room', limits.window_seconds);
      expectTooMany(await wrongPassword(app, addresses[0]!), 'start_room', limits.window_seconds);
    }
  });

  it.skipIf(twoWithoutRedis)("wrong pins through the gateway refuse no room's dial-in, until one call-in id has 50", async () => {
    const gateway = freshSource(); // every caller's address
    const wrongPin = scene.sip.pin === '0000000000' ? '1111111111' : '0000000000';
    const dial = (app: TestApp, sip: { id: string; pin: string }) => startCallIn(app, scene.gateway, sip, gateway);
    const wrong = (i: number) => dial(at(i), { id: scene.sip.id, pin: wrongPin });
    for (let n = 0; n < limits.failures_per_source; n++) expect((await wrong(n)).status).toBe(400);
    for (const app of instances()) {
      expect((await dial(app, scene.otherSip)).status).toBe(200);
      expect((await dial(app, scene.sip)).status).toBe(200);
    }
    for (let n = limits.failures_per_source; n < limits.failures_per_target; n++) expect((await wrong(n)).status).toBe(400);
    for (const app of instances()) {
      // bounded: the call-in id guessed at takes no more pins, not even the right one, for the window
      expectTooMany(await dial(app, { id: scene.sip.id, pin: wrongPin }), 'start_call_in', limits.window_seconds);
      expectTooMany(await dial(app, scene.sip), 'start_call_in', limits.window_seconds);
      expect((await dial(app, scene.otherSip)).status).toBe(200);
    }
  });
});
