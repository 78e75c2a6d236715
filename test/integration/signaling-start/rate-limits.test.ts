/**
 * Brute-force protection of the start operations: failed room passwords and invite codes are
 * counted per source address and per target (a room for the account or code asking its password,
 * the code guessed), call-in pins per call-in id; over the limit the answer is 429 with Retry-After
 * and the error body, even for the right secret. With Redis the counts are shared by every instance.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import type { TestApp, TestUser } from '../../support/test-app.js';
import {
  freshSource,
  insertInvite,
  insertRoom,
  insertSipConfig,
  inviteToRoomEvent,
  redisUrl,
  signalingConfig,
  startCallIn,
  startInvited,
  startRoom,
  startSignalingApp,
  useSignalingApp,
  type Answer,
} from '../../support/signaling.js';

const limits = { window_seconds: 300, failures_per_source: 3, failures_per_target: 5 };

const app = useSignalingApp(limits);
let owner: TestUser, invitee: TestUser;
let roomId: string;

beforeEach(async () => {
  [owner, invitee] = await Promise.all([app.login('owner'), app.login('invitee')]);
  roomId = await insertRoom(app, owner, 'correct-horse');
  await inviteToRoomEvent(app, roomId, owner, invitee);
});

function expectTooMany(res: Answer<any>) {
  expect(res.status).toBe(429);
  expect(res.body).toMatchObject({ code: 'too_many_requests', status: '429', documentation_url: '/docs#error-too_many_requests' });
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(limits.window_seconds);
}

const eventOf = (room: string) => app.convene.database.db.selectFrom('events').select('id').where('room_id', '=', room).executeTakeFirstOrThrow();
const withPassword = (password: string, source: string) => ({ token: invitee.accessToken, body: { password }, source });

describe('room passwords (start_room)', () => {
  it('allow the last failure a source has, and refuse it even the right password after that', async () => {
    const source = freshSource();
    for (let i = 0; i < limits.failures_per_source - 1; i++) {
      expect((await startRoom(app, roomId, withPassword('wrong', source))).status).toBe(401);
    }
    expect((await startRoom(app, roomId, withPassword('wrong', source))).status).toBe(401); // the 3rd: still compared
    expectTooMany(await startRoom(app, roomId, withPassword('correct-horse', source)));
    // another address is not affected
    expect((await startRoom(app, roomId, withPassword('correct-horse', freshSource()))).status).toBe(200);
  });

  it("limit one invitee's guesses at the room over all sources together, and no other invitee's", async () => {
    for (let i = 0; i < limits.failures_per_target; i++) {
      expect((await startRoom(app, roomId, withPassword('wrong', freshSource()))).status).toBe(401);
    }
    expectTooMany(await startRoom(app, roomId, withPassword('correct-horse', freshSource())));
    const another = await app.login('another-invitee');
    await app.convene.database.db
      .insertInto('event_invites')
      .values({ event_id: (await eventOf(roomId)).id, invitee: another.id, created_by: owner.id })
      .execute();
    expect((await startRoom(app, roomId, { token: another.accessToken, body: { password: 'correct-horse' } })).status).toBe(200);
    // another room is not affected
    const other = await insertRoom(app, owner, 'other');
    await inviteToRoomEvent(app, other, owner, invitee);
    expect((await startRoom(app, other, withPassword('other', freshSource()))).status).toBe(200);
  });

  it('count the room once, however the path writes its id', async () => {
    const spellings = [roomId, roomId.toUpperCase(), roomId.replace(/[a-f]/, (c) => c.toUpperCase())];
    for (let i = 0; i < limits.failures_per_target; i++) {
      expect((await startRoom(app, spellings[i % spellings.length]!, withPassword('wrong', freshSource()))).status).toBe(401);
    }
    expectTooMany(await startRoom(app, roomId.toUpperCase(), withPassword('correct-horse', freshSource())));
  });

  it('do not count successes, nor the owner who needs no password', async () => {
    const source = freshSource();
    for (let i = 0; i < limits.failures_per_source + 2; i++) {
      expect((await startRoom(app, roomId, withPassword('correct-horse', source))).status).toBe(200);
      expect((await startRoom(app, roomId, { token: owner.accessToken, source })).status).toBe(200);
    }
  });

  it('are refused before anything else is checked, but never for a stranger to the room', async () => {
    const source = freshSource();
    for (let i = 0; i < limits.failures_per_source; i++) await startRoom(app, roomId, withPassword('wrong', source));
    expectTooMany(await startRoom(app, roomId, { ...withPassword('correct-horse', source), body: { password: 'correct-horse', breakout_room: 1 } }));
    const stranger = await app.login('stranger');
    expect((await startRoom(app, roomId, { token: stranger.accessToken, source })).status).toBe(404);
  });
});

describe('invite codes and passwords (start_invited_room)', () => {
  it('limit guessed codes per source', async () => {
    const code = await insertInvite(app, roomId, owner);
    const source = freshSource();
    for (let i = 0; i < limits.failures_per_source; i++) {
      expect((await startInvited(app, roomId, { invite_code: crypto.randomUUID() }, source)).status).toBe(404);
    }
    expectTooMany(await startInvited(app, roomId, { invite_code: code, password: 'correct-horse' }, source));
    expect((await startInvited(app, roomId, { invite_code: code, password: 'correct-horse' }, freshSource())).status).toBe(200);
  });

  it('count expired and inactive codes as failures', async () => {
    const source = freshSource();
    const expired = await insertInvite(app, roomId, owner, { expiration: new Date(Date.now() - 1000) });
    const inactive = await insertInvite(app, roomId, owner, { active: false });
    // a malformed code of its own: a fixed one is counted per code in the Redis the suite shares
    // (the hostile-input test sends `InviteCode not-a-code` many times within the same window)
    for (const invite_code of [expired, inactive, `not-a-code-${crypto.randomUUID()}`]) {
      expect((await startInvited(app, roomId, { invite_code }, source)).status).toBe(404);
    }
    expectTooMany(await startInvited(app, roomId, { invite_code: expired }, source));
  });

  it('refuse a valid code of another room without counting it: its holder guesses nothing', async () => {
    const otherRoom = await insertRoom(app, owner, null);
    const foreign = await insertInvite(app, otherRoom, owner);
    const source = freshSource();
    for (let i = 0; i < limits.failures_per_target + 1; i++) {
      expect((await startInvited(app, roomId, { invite_code: foreign }, source)).status).toBe(404);
    }
    expect((await startInvited(app, otherRoom, { invite_code: foreign }, source)).status).toBe(200);
  });

  it("limit guessed room passwords of a code's holder, together with the registered users' guesses", async () => {
    const code = await insertInvite(app, roomId, owner);
    const source = freshSource();
    expect((await startRoom(app, roomId, withPassword('wrong', source))).status).toBe(401);
    for (let i = 1; i < limits.failures_per_source; i++) {
      expect((await startInvited(app, roomId, { invite_code: code, password: 'wrong' }, source)).status).toBe(401);
    }
    expectTooMany(await startInvited(app, roomId, { invite_code: code, password: 'correct-horse' }, source));
  });
});

describe('call-in pins (start_call_in)', () => {
  let gateway: string;
  let sip: { id: string; pin: string };
  beforeEach(async () => {
    gateway = await app.issuer.serviceToken(['call-in']);
    sip = await insertSipConfig(app, roomId);
  });
  const wrongPin = () => (sip.pin === '0000000000' ? '1111111111' : '0000000000');

  it("are not counted per source: a gateway's address is every caller's", async () => {
    const source = freshSource();
    for (let i = 0; i < limits.failures_per_source; i++) {
      expect((await startCallIn(app, gateway, { id: sip.id, pin: wrongPin() }, source)).status).toBe(400);
    }
    expect((await startCallIn(app, gateway, { id: sip.id, pin: sip.pin }, source)).status).toBe(200);
  });

  it('limit wrong pins per call-in id over all sources', async () => {
    for (let i = 0; i < limits.failures_per_target; i++) {
      expect((await startCallIn(app, gateway, { id: sip.id, pin: wrongPin() }, freshSource())).status).toBe(400);
    }
    expectTooMany(await startCallIn(app, gateway, { id: sip.id, pin: sip.pin }, freshSource()));
  });

  it('check the gateway before counting anything', async () => {
    const source = freshSource();
    for (let i = 0; i < limits.failures_per_source + 1; i++) {
      expect((await startCallIn(app, undefined, { id: sip.id, pin: wrongPin() }, source)).status).toBe(401);
    }
    expect((await startCallIn(app, gateway, { id: sip.id, pin: sip.pin }, source)).status).toBe(200);
  });
});

describe.skipIf(!redisUrl)('several instances (Redis)', () => {
  let second: TestApp;
  beforeAll(async () => {
    second = await app.withConfig(signalingConfig(limits));
  });
  afterAll(() => second?.close());

  it('share the counts: failures on either instance add up', async () => {
    const source = freshSource();
    const instances = [app, second];
    for (let i = 0; i < limits.failures_per_source; i++) {
      expect((await startRoom(instances[i % 2]!, roomId, withPassword('wrong', source))).status).toBe(401);
    }
    expectTooMany(await startRoom(app, roomId, withPassword('correct-horse', source)));
    expectTooMany(await startRoom(second, roomId, withPassword('correct-horse', source)));
  });

  it('redeem a ticket issued by the other instance', async () => {
    const res = await startRoom(app, roomId, { token: owner.accessToken });
    expect(await second.convene.signalingStore.takeTicket(res.body.ticket)).toMatchObject({ roomId });
    expect(await app.convene.signalingStore.takeTicket(res.body.ticket)).toBeUndefined();
  });
});
if (!redisUrl) console.log('REDIS_URL is not set: sharing counts and tickets across instances is not tested in this run');

describe('the default limits', () => {
  let defaults: TestApp;
  beforeAll(async () => {
    defaults = await startSignalingApp();
  });
  afterAll(() => defaults?.close());

  it('allow 10 failed passwords per source, and refuse the 11th attempt', async () => {
    await defaults.reset();
    const [o, i] = await Promise.all([defaults.login('owner'), defaults.login('invitee')]);
    const room = await insertRoom(defaults, o, 'correct-horse');
    await inviteToRoomEvent(defaults, room, o, i);
    const source = freshSource();
    const attempt = (password: string) => startRoom(defaults, room, { token: i.accessToken, body: { password }, source });
    for (let n = 0; n < 10; n++) expect((await attempt('wrong')).status).toBe(401);
    expectTooMany(await attempt('correct-horse'));
  });
});
