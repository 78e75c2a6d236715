/** `POST /rooms/{room_id}/start`: a registered user's signaling ticket. */
import { beforeEach, describe, expect, it } from 'vitest';

import type { TestUser } from '../../support/test-app.js';
import { NOT_A_UUID, TOKEN_SHAPE, UNKNOWN_ROOM, dbOf, insertRoom, inviteToRoomEvent, redeem, startRoom, useSignalingApp } from '../../support/signaling.js';

const app = useSignalingApp();
let owner: TestUser, invitee: TestUser, stranger: TestUser;
let roomId: string;

beforeEach(async () => {
  [owner, invitee, stranger] = await Promise.all([app.login('owner'), app.login('invitee'), app.login('stranger')]);
  roomId = await insertRoom(app, owner);
  await inviteToRoomEvent(app, roomId, owner, invitee);
});

describe('who may start a room', () => {
  it.each([
    ['the owner', () => owner],
    ['an invitee of its event', () => invitee],
  ])('gives %s a ticket for the room as that user', async (_who, user) => {
    const res = await startRoom(app, roomId, { token: user().accessToken });
    expect(res.status).toBe(200);
    expect(res.body.ticket).toMatch(TOKEN_SHAPE);
    expect(res.body.resumption).toMatch(TOKEN_SHAPE);
    expect(await redeem(app, res.body.ticket)).toEqual({
      participantId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      roomId,
      who: { kind: 'user', userId: user().id },
      breakoutRoom: null,
      resumption: res.body.resumption,
      resuming: false,
    });
  });

  it('names the room in one spelling, however the path writes its id', async () => {
    const res = await startRoom(app, roomId.toUpperCase(), { token: invitee.accessToken });
    expect(res.status).toBe(200);
    expect((await redeem(app, res.body.ticket)).roomId).toBe(roomId);
  });

  it('answers 404 to a stranger, as if the room did not exist', async () => {
    const res = await startRoom(app, roomId, { token: stranger.accessToken });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
  });

  it('answers 401 without a token, and with a bad one', async () => {
    expect((await startRoom(app, roomId)).status).toBe(401);
    expect((await startRoom(app, roomId, { token: 'not.a.token' })).status).toBe(401);
  });

  it('answers 404 to a banned invitee', async () => {
    await dbOf(app).insertInto('room_bans').values({ room_id: roomId, user_id: invitee.id, created_by: owner.id }).execute();
    expect((await startRoom(app, roomId, { token: invitee.accessToken })).status).toBe(404);
  });

  it('answers 404 for an unknown room and 400 for an id that is not a uuid', async () => {
    expect((await startRoom(app, UNKNOWN_ROOM, { token: owner.accessToken })).status).toBe(404);
    const res = await startRoom(app, NOT_A_UUID, { token: owner.accessToken });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
  });
});

describe('tickets', () => {
  it('are single use and different on every start', async () => {
    const first = await startRoom(app, roomId, { token: owner.accessToken });
    const second = await startRoom(app, roomId, { token: owner.accessToken });
    expect(first.body.ticket).not.toBe(second.body.ticket);
    expect(first.body.resumption).not.toBe(second.body.resumption);
    const data = await redeem(app, first.body.ticket);
    expect(await app.convene.signalingStore.takeTicket(first.body.ticket)).toBeUndefined();
    // a new start is a new participant
    expect((await redeem(app, second.body.ticket)).participantId).not.toBe(data.participantId);
  });
});

describe('the body', () => {
  it('may be absent, empty, or carry unknown fields', async () => {
    for (const body of [undefined, {}, { e2e_encryption: true, breakout_room: null }]) {
      expect((await startRoom(app, roomId, { token: owner.accessToken, body })).status).toBe(200);
    }
  });

  it('must be JSON', async () => {
    const res = await startRoom(app, roomId, { token: owner.accessToken, body: '{"breakout_room":' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_json');
  });

  it.each([0, 1, '1', 'a'.repeat(64)])('refuses breakout room %j: Convene has none', async (breakout_room) => {
    const res = await startRoom(app, roomId, { token: owner.accessToken, body: { breakout_room } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_breakout_room_id');
  });

  it.each([-1, 'a'.repeat(65), true, {}])('refuses a malformed breakout room %j', async (breakout_room) => {
    const res = await startRoom(app, roomId, { token: owner.accessToken, body: { breakout_room } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
  });

  it('takes a resumption token of 64 characters and refuses 65', async () => {
    expect((await startRoom(app, roomId, { token: owner.accessToken, body: { resumption: 'x'.repeat(64) } })).status).toBe(200);
    const res = await startRoom(app, roomId, { token: owner.accessToken, body: { resumption: 'x'.repeat(65) } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: 'resumption', code: 'invalid_length' })]);
  });

  it('takes a password of 255 characters and refuses 256', async () => {
    const ok = await startRoom(app, roomId, { token: owner.accessToken, body: { password: 'p'.repeat(255) } });
    expect(ok.status).toBe(200);
    const res = await startRoom(app, roomId, { token: owner.accessToken, body: { password: 'p'.repeat(256) } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: 'password', code: 'invalid_length' })]);
  });
});

describe('a room with a password', () => {
  let locked: string;
  beforeEach(async () => {
    locked = await insertRoom(app, owner, 'correct-horse');
    await inviteToRoomEvent(app, locked, owner, invitee);
  });

  it('lets its owner in without the password', async () => {
    expect((await startRoom(app, locked, { token: owner.accessToken })).status).toBe(200);
  });

  it('lets an invitee in with the password only', async () => {
    for (const body of [undefined, {}, { password: 'wrong' }, { password: 'correct-hors' }, { password: '' }]) {
      const res = await startRoom(app, locked, { token: invitee.accessToken, body });
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('wrong_room_password');
      expect(res.headers.get('www-authenticate')).toBe('RoomPassword'); // a 401 names its challenge (once none)
    }
    expect((await startRoom(app, locked, { token: invitee.accessToken, body: { password: 'correct-horse' } })).status).toBe(200);
  });

  it('still answers 404 to a stranger with the right password', async () => {
    expect((await startRoom(app, locked, { token: stranger.accessToken, body: { password: 'correct-horse' } })).status).toBe(404);
  });

  it('checks the password before the breakout room', async () => {
    const res = await startRoom(app, locked, { token: invitee.accessToken, body: { breakout_room: 1 } });
    expect(res.body.code).toBe('wrong_room_password');
  });
});

describe('resumption', () => {
  /** Starts and plays the WebSocket server's part: the session runs with the start's resumption token. */
  async function runningSession(user: TestUser, room = roomId) {
    const res = await startRoom(app, room, { token: user.accessToken });
    const data = await redeem(app, res.body.ticket);
    await app.convene.signalingStore.saveResumption(data.resumption, { participantId: data.participantId, roomId: room, who: data.who });
    return { token: data.resumption, participantId: data.participantId };
  }

  it('refuses to resume a session that is still connected', async () => {
    const session = await runningSession(invitee);
    const res = await startRoom(app, roomId, { token: invitee.accessToken, body: { resumption: session.token } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('session_running');
  });

  it('gives a dropped session its participant id back, once', async () => {
    const session = await runningSession(invitee);
    await app.convene.signalingStore.markDisconnected(session.token);
    const resumed = await startRoom(app, roomId, { token: invitee.accessToken, body: { resumption: session.token } });
    expect(resumed.status).toBe(200);
    expect(await redeem(app, resumed.body.ticket)).toMatchObject({ participantId: session.participantId, resuming: true });
    expect(resumed.body.resumption).not.toBe(session.token);

    const again = await startRoom(app, roomId, { token: invitee.accessToken, body: { resumption: session.token } });
    expect(again.status).toBe(200);
    expect(await redeem(app, again.body.ticket)).toMatchObject({ resuming: false });
  });

  it("ignores another user's token, which stays usable by its owner", async () => {
    const session = await runningSession(invitee);
    await app.convene.signalingStore.markDisconnected(session.token);
    const other = await startRoom(app, roomId, { token: owner.accessToken, body: { resumption: session.token } });
    expect(other.status).toBe(200);
    expect((await redeem(app, other.body.ticket)).participantId).not.toBe(session.participantId);
    const own = await startRoom(app, roomId, { token: invitee.accessToken, body: { resumption: session.token } });
    expect((await redeem(app, own.body.ticket)).participantId).toBe(session.participantId);
  });

  it('ignores a token of another room', async () => {
    const otherRoom = await insertRoom(app, owner);
    const session = await runningSession(owner, otherRoom);
    const res = await startRoom(app, roomId, { token: owner.accessToken, body: { resumption: session.token } });
    expect(res.status).toBe(200); // not session_running: that session is in another room
    expect(await redeem(app, res.body.ticket)).toMatchObject({ resuming: false });
  });
});
