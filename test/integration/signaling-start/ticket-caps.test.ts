/**
 * Caps on signaling tickets (issue 22; `[signaling_caps]`): per registered user, per invite code
 * (its guests together) and per source address, in windows of `tickets_window_seconds`. Each is
 * tested at its edge: N tickets issued, the next start answered 429 `too_many_tickets` with
 * `Retry-After` (checked against the contract by the test app's client). Call-in gateways are
 * exempt. With Redis the counts are shared by every instance.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  freshSource,
  insertInvite,
  insertRoom,
  insertSipConfig,
  redisUrl,
  signalingConfig,
  startCallIn,
  startInvited,
  startRoom,
  type Answer,
} from '../../support/signaling.js';
import { useTestApp, type TestApp, type TestUser } from '../../support/test-app.js';

const CAPS = { tickets_window_seconds: 60, tickets_per_user: 4, tickets_per_invite_code: 5, tickets_per_source: 6 };
const config = { ...signalingConfig(), signaling_caps: CAPS };
const app = useTestApp(config);

let owner: TestUser;
let roomId: string;
beforeEach(async () => {
  owner = await app.login('owner');
  roomId = await insertRoom(app, owner);
});

function expectCapped(answer: Answer<any>) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(429);
  expect(answer.body).toMatchObject({ code: 'too_many_tickets', status: '429', documentation_url: '/docs#error-too_many_tickets' });
  const retryAfter = Number(answer.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(CAPS.tickets_window_seconds);
}

const issued = (answer: Answer<any>) => expect(answer.status, JSON.stringify(answer.body)).toBe(200);

describe('signaling tickets', () => {
  it(`per user: ${CAPS.tickets_per_user} in a window, the next refused; another user is not held back`, async () => {
    for (let i = 0; i < CAPS.tickets_per_user; i++) issued(await startRoom(app, roomId, { token: owner.accessToken, body: {} }));
    expectCapped(await startRoom(app, roomId, { token: owner.accessToken, body: {} }));
    const other = await app.login('other');
    issued(await startRoom(app, await insertRoom(app, other), { token: other.accessToken, body: {} }));
  });

  it(`per invite code: ${CAPS.tickets_per_invite_code} for its guests together, the next refused`, async () => {
    const code = await insertInvite(app, roomId, owner);
    for (let i = 0; i < CAPS.tickets_per_invite_code; i++) issued(await startInvited(app, roomId, { invite_code: code }));
    expectCapped(await startInvited(app, roomId, { invite_code: code }));
    issued(await startInvited(app, roomId, { invite_code: await insertInvite(app, roomId, owner) }));
  });

  it(`per source address: ${CAPS.tickets_per_source} from one address, the next refused`, async () => {
    const source = freshSource();
    const codes = await Promise.all(Array.from({ length: CAPS.tickets_per_source + 1 }, () => insertInvite(app, roomId, owner)));
    for (let i = 0; i < CAPS.tickets_per_source; i++) issued(await startInvited(app, roomId, { invite_code: codes[i] }, source));
    expectCapped(await startInvited(app, roomId, { invite_code: codes[CAPS.tickets_per_source] }, source));
    // a registered user from that address is held back as well
    const third = await app.login('third');
    expectCapped(await startRoom(app, await insertRoom(app, third), { token: third.accessToken, body: {}, source }));
    issued(await startInvited(app, roomId, { invite_code: codes[CAPS.tickets_per_source] })); // from another address
  });

  it('counts only issued tickets: a refused start (a wrong password) takes no place', async () => {
    const guarded = await insertRoom(app, owner, 'right-password');
    const code = await insertInvite(app, guarded, owner);
    for (let i = 0; i < 3; i++) expect((await startInvited(app, guarded, { invite_code: code, password: 'wrong' })).status).toBe(401);
    for (let i = 0; i < CAPS.tickets_per_invite_code; i++) issued(await startInvited(app, guarded, { invite_code: code, password: 'right-password' }));
    expectCapped(await startInvited(app, guarded, { invite_code: code, password: 'right-password' }));
  });

  it('leaves call-in gateways out: one gateway address carries every phone caller', async () => {
    const source = freshSource();
    const sip = await insertSipConfig(app, roomId);
    const token = await app.issuer.serviceToken(['call-in']);
    for (let i = 0; i < CAPS.tickets_per_source + 2; i++) issued(await startCallIn(app, token, { id: sip.id, pin: sip.pin }, source));
  });
});

describe.skipIf(!redisUrl)('signaling tickets across instances (Redis)', () => {
  let second: TestApp;
  beforeAll(async () => {
    second = await app.withConfig(config);
  });
  afterAll(() => second?.close());

  it('counts a user’s tickets on every instance together', async () => {
    for (let i = 0; i < CAPS.tickets_per_user; i++) {
      issued(await startRoom(i % 2 === 0 ? app : second, roomId, { token: owner.accessToken, body: {} }));
    }
    expectCapped(await startRoom(second, roomId, { token: owner.accessToken, body: {} }));
    expectCapped(await startRoom(app, roomId, { token: owner.accessToken, body: {} }));
  });
});
