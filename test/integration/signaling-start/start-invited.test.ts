/** `POST /rooms/{room_id}/start_invited`: a guest's signaling ticket, on the strength of an invite code. */
import { beforeEach, describe, expect, it } from 'vitest';

import type { TestUser } from '../../support/test-app.js';
import { NOT_A_UUID, TOKEN_SHAPE, UNKNOWN_ROOM, insertInvite, insertRoom, post, redeem, startInvited, useSignalingApp } from '../../support/signaling.js';

const app = useSignalingApp();
let owner: TestUser;
let roomId: string;
let code: string;

beforeEach(async () => {
  owner = await app.login('owner');
  roomId = await insertRoom(app, owner);
  code = await insertInvite(app, roomId, owner);
});

describe('an invite code', () => {
  it('gives its holder a guest ticket for the room, without any authorization', async () => {
    const res = await startInvited(app, roomId, { invite_code: code });
    expect(res.status).toBe(200);
    expect(res.body.ticket).toMatch(TOKEN_SHAPE);
    expect(res.body.resumption).toMatch(TOKEN_SHAPE);
    expect(await redeem(app, res.body.ticket)).toMatchObject({
      roomId,
      who: { kind: 'guest', inviteCode: code },
      breakoutRoom: null,
      resumption: res.body.resumption,
      resuming: false,
    });
  });

  it('names the room and the code in one spelling, however the request writes them', async () => {
    const res = await startInvited(app, roomId.toUpperCase(), { invite_code: code.toUpperCase() });
    expect(res.status).toBe(200);
    expect(await redeem(app, res.body.ticket)).toMatchObject({ roomId, who: { kind: 'guest', inviteCode: code } });
  });

  it('works whatever Authorization header comes along (the operation takes none)', async () => {
    const res = await post(app, `/v1/rooms/${roomId}/start_invited`, { token: 'whatever', body: { invite_code: code } });
    expect(res.status).toBe(200);
  });

  it('expiring in the future works; expired, inactive, unknown or of another room answers 404', async () => {
    const future = await insertInvite(app, roomId, owner, { expiration: new Date(Date.now() + 60_000) });
    expect((await startInvited(app, roomId, { invite_code: future })).status).toBe(200);

    const otherRoom = await insertRoom(app, owner);
    const never = [
      await insertInvite(app, roomId, owner, { expiration: new Date(Date.now() - 1_000) }),
      await insertInvite(app, roomId, owner, { active: false }),
      await insertInvite(app, otherRoom, owner),
      '6f2d8a41-7c3e-4b95-9e1a-2c4d6b8f0e13',
      'not-a-uuid',
    ];
    for (const invite_code of never) {
      const res = await startInvited(app, roomId, { invite_code });
      expect(res.status, invite_code).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
  });

  it('of 128 characters is looked up (404), and one of 129 refused as malformed', async () => {
    expect((await startInvited(app, roomId, { invite_code: 'c'.repeat(128) })).status).toBe(404);
    const res = await startInvited(app, roomId, { invite_code: 'c'.repeat(129) });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: 'invite_code', code: 'invalid_length' })]);
  });

  it('is required, as a non-empty string', async () => {
    for (const body of [{}, { invite_code: '' }, { invite_code: 42 }, { invite_code: null }]) {
      const res = await startInvited(app, roomId, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('validation_failed');
    }
    expect((await startInvited(app, roomId, undefined)).status).toBe(400);
    expect((await startInvited(app, roomId, '{"invite_code"')).body.code).toBe('invalid_json');
  });
});

describe('the room', () => {
  it('answers 404 when unknown and 400 for an id that is not a uuid', async () => {
    expect((await startInvited(app, UNKNOWN_ROOM, { invite_code: code })).status).toBe(404);
    expect((await startInvited(app, NOT_A_UUID, { invite_code: code })).status).toBe(400);
  });

  it("with a password needs it: missing or wrong is 401, after the code's check", async () => {
    const locked = await insertRoom(app, owner, 'correct-horse');
    const lockedCode = await insertInvite(app, locked, owner);
    for (const password of [undefined, '', 'wrong', 'correct-horsE']) {
      const res = await startInvited(app, locked, { invite_code: lockedCode, password });
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('wrong_room_password');
      expect(res.headers.get('www-authenticate')).toBe('RoomPassword');
    }
    expect((await startInvited(app, locked, { invite_code: code, password: 'correct-horse' })).status).toBe(404);
    expect((await startInvited(app, locked, { invite_code: lockedCode, password: 'correct-horse' })).status).toBe(200);
  });

  it('without a password ignores one; a password of 128 characters is taken and 129 refused', async () => {
    expect((await startInvited(app, roomId, { invite_code: code, password: 'p'.repeat(128) })).status).toBe(200);
    const res = await startInvited(app, roomId, { invite_code: code, password: 'p'.repeat(129) });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: 'password', code: 'invalid_length' })]);
  });
});

describe('breakout rooms and resumption', () => {
  it('refuses any breakout room but null', async () => {
    expect((await startInvited(app, roomId, { invite_code: code, breakout_room: null })).status).toBe(200);
    const res = await startInvited(app, roomId, { invite_code: code, breakout_room: 'breakout-1' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_breakout_room_id');
  });

  it('resumes a dropped guest session holding the same code, and refuses a running one', async () => {
    const first = await startInvited(app, roomId, { invite_code: code });
    const data = await redeem(app, first.body.ticket);
    const store = app.convene.signalingStore;
    await store.saveResumption(data.resumption, { participantId: data.participantId, roomId, who: data.who });

    const running = await startInvited(app, roomId, { invite_code: code, resumption: data.resumption });
    expect(running.status).toBe(400);
    expect(running.body.code).toBe('session_running');

    await store.markDisconnected(data.resumption);
    const otherCode = await insertInvite(app, roomId, owner);
    const stranger = await startInvited(app, roomId, { invite_code: otherCode, resumption: data.resumption });
    expect(await redeem(app, stranger.body.ticket)).toMatchObject({ resuming: false });

    const resumed = await startInvited(app, roomId, { invite_code: code, resumption: data.resumption });
    expect(await redeem(app, resumed.body.ticket)).toMatchObject({ participantId: data.participantId, resuming: true });
  });
});
