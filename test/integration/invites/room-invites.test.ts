/**
 * The room invite operations over HTTP: create, list, get, update, delete, with the access matrix of
 * their descriptions (reads: owner and event invitees; writes: owner; everyone else 404; no token
 * 401; a guest's invite code is not accepted here).
 */
import { beforeEach, describe, expect, it } from 'vitest';

import { useTestApp } from '../../support/test-app.js';
import { dbOf, expectError, insertInvite, insertRoom, jsonRequest, parties, type Parties, type RoomInvite } from '../../support/invites.js';

const app = useTestApp();
let p: Parties;
beforeEach(async () => {
  p = await parties(app);
});

const invitesPath = (roomId: string, code?: string) => `/v1/rooms/${roomId}/invites${code ? `/${code}` : ''}`;
const parse = <T>(response: { text_: string }): T => JSON.parse(response.text_) as T;

async function create(token: string, body: unknown = {}, roomId = p.roomId) {
  return app.request('POST', invitesPath(roomId), jsonRequest({ token }, body));
}

describe('create_room_invite', () => {
  it('creates an active UUIDv4 code that never expires, answering 200 with public profiles', async () => {
    const response = await create(p.owner.accessToken);
    expect(response.status, response.text_).toBe(200);
    const invite = parse<RoomInvite>(response);
    expect(invite.invite_code).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(invite).toMatchObject({ room: p.roomId, active: true, expiration: null });
    expect(invite.created_by).toEqual({
      id: p.owner.id,
      email: p.owner.email,
      title: '',
      firstname: 'Owner',
      lastname: 'Tester',
      display_name: expect.any(String),
      avatar_url: expect.any(String),
    });
    expect(invite.updated_by).toEqual(invite.created_by);
    expect(invite.updated).toBe(invite.created);
    const stored = await dbOf(app).selectFrom('room_invites').selectAll().where('code', '=', invite.invite_code).executeTakeFirst();
    expect(stored).toMatchObject({ room_id: p.roomId, active: true, expiration: null });
  });

  it('stores an expiration (given with an offset) and answers it in UTC', async () => {
    const response = await create(p.owner.accessToken, { expiration: '2031-06-01T12:00:00+02:00' });
    expect(parse<RoomInvite>(response).expiration).toBe('2031-06-01T10:00:00.000Z');
  });

  it('takes an explicit null as no expiry and ignores unknown fields', async () => {
    const response = await create(p.owner.accessToken, { expiration: null, unknown: 1 });
    expect(response.status).toBe(200);
    expect(parse<RoomInvite>(response).expiration).toBeNull();
  });

  it('refuses a malformed expiration, a non-object body and a missing body', async () => {
    expectError(await create(p.owner.accessToken, { expiration: 'tomorrow' }), 400, 'validation_failed');
    expectError(await create(p.owner.accessToken, { expiration: 17 }), 400, 'validation_failed');
    expectError(await create(p.owner.accessToken, []), 400, 'validation_failed');
    expectError(await create(p.owner.accessToken, '{"expiration":'), 400, 'invalid_json');
    const noBody = await app.request('POST', invitesPath(p.roomId), jsonRequest({ token: p.owner.accessToken }));
    expectError(noBody, 400, 'validation_failed');
  });

  it('refuses an expiration the format lets through that no answer can show, and stores nothing', async () => {
    // a leap second (once a 500), the years 10000 and -1 in UTC (once answered in a form the contract refuses)
    for (const expiration of ['2026-12-31T23:59:60Z', '9999-12-31T23:59:59-00:01', '0000-01-01T00:00:00+00:01']) {
      const response = await create(p.owner.accessToken, { expiration });
      expectError(response, 400, 'validation_failed');
      expect(parse<{ errors: unknown[] }>(response).errors, expiration).toEqual([expect.objectContaining({ field: 'expiration', code: 'invalid_date_time' })]);
      const code = await insertInvite(app, p.roomId, p.owner);
      expectError(await app.request('PUT', invitesPath(p.roomId, code), jsonRequest({ token: p.owner.accessToken }, { expiration })), 400, 'validation_failed');
    }
    const stored = await dbOf(app).selectFrom('room_invites').select('expiration').execute();
    expect(stored.map((row) => row.expiration)).toEqual([null, null, null]);
    const last = await create(p.owner.accessToken, { expiration: '9999-12-31T23:59:59.999Z' });
    expect(parse<RoomInvite>(last).expiration).toBe('9999-12-31T23:59:59.999Z');
  });

  it('is the owner’s only: an invitee and a stranger get 404, no token 401, an unknown room 404', async () => {
    expectError(await create(p.invitee.accessToken), 404, 'not_found');
    expectError(await create(p.stranger.accessToken), 404, 'not_found');
    expectError(await app.request('POST', invitesPath(p.roomId), jsonRequest({}, {})), 401, 'unauthorized');
    expectError(await create(p.owner.accessToken, {}, crypto.randomUUID()), 404, 'not_found');
    expect(await dbOf(app).selectFrom('room_invites').selectAll().execute()).toEqual([]);
  });

  it('refuses a room id that is not a UUID with 400', async () => {
    expectError(await create(p.owner.accessToken, {}, 'not-a-uuid'), 400, 'validation_failed');
  });
});

describe('get_room_invites', () => {
  const list = (token: string | undefined, query = '', roomId = p.roomId) => app.request('GET', `${invitesPath(roomId)}${query}`, jsonRequest({ token }));

  it('lists every code of the room newest first, inactive and expired ones included', async () => {
    const active = await insertInvite(app, p.roomId, p.owner);
    const inactive = await insertInvite(app, p.roomId, p.owner, { active: false });
    const expired = await insertInvite(app, p.roomId, p.owner, { expiration: new Date(Date.now() - 60_000) });
    const otherRoom = await insertRoom(app, p.owner);
    await insertInvite(app, otherRoom, p.owner);
    // distinct creation times so the order is the one of creation
    for (const [i, code] of [active, inactive, expired].entries()) {
      await dbOf(app)
        .updateTable('room_invites')
        .set({ created_at: new Date(Date.UTC(2026, 0, 1 + i)) })
        .where('code', '=', code)
        .execute();
    }
    const response = await list(p.owner.accessToken);
    expect(response.status, response.text_).toBe(200);
    const invites = parse<RoomInvite[]>(response);
    expect(invites.map((i) => i.invite_code)).toEqual([expired, inactive, active]);
    expect(invites.map((i) => i.active)).toEqual([true, false, true]);
    expect(response.headers.get('link')).toBeNull();
  });

  it('is readable by the owner and the event invitee, 404 for a stranger, 401 without a token', async () => {
    await insertInvite(app, p.roomId, p.owner);
    for (const user of [p.owner, p.invitee]) {
      const response = await list(user.accessToken);
      expect(response.status).toBe(200);
      expect(parse<RoomInvite[]>(response)).toHaveLength(1);
    }
    expectError(await list(p.stranger.accessToken), 404, 'not_found');
    expectError(await list(undefined), 401, 'unauthorized');
    expectError(await list(p.owner.accessToken, '', crypto.randomUUID()), 404, 'not_found');
    expectError(await list(p.owner.accessToken, '', '1234'), 400, 'validation_failed');
  });

  it('pages with a Link header and without repeats or gaps', async () => {
    const codes = new Set<string>();
    for (let i = 0; i < 5; i++) codes.add(await insertInvite(app, p.roomId, p.owner));
    const first = await list(p.owner.accessToken, '?per_page=2');
    const link = first.headers.get('link')!;
    expect(link).toContain('rel="next"');
    expect(link).toMatch(/page=3[^>]*>; rel="last"/);
    const seen = [];
    for (const page of [1, 2, 3]) seen.push(...parse<RoomInvite[]>(await list(p.owner.accessToken, `?per_page=2&page=${page}`)));
    expect(new Set(seen.map((i) => i.invite_code))).toEqual(codes);
    expect(seen).toHaveLength(5);
    const last = await list(p.owner.accessToken, '?per_page=2&page=3');
    expect(last.headers.get('link')).toContain('rel="first"');
    expect(last.headers.get('link')).not.toContain('rel="next"');
    expect(parse<RoomInvite[]>(await list(p.owner.accessToken, '?per_page=2&page=4'))).toEqual([]);
  });

  it('takes per_page 1 and 100, refuses 0, 101 and page 0', async () => {
    await insertInvite(app, p.roomId, p.owner);
    await insertInvite(app, p.roomId, p.owner);
    expect(parse<RoomInvite[]>(await list(p.owner.accessToken, '?per_page=1'))).toHaveLength(1);
    expect(parse<RoomInvite[]>(await list(p.owner.accessToken, '?per_page=100'))).toHaveLength(2);
    expectError(await list(p.owner.accessToken, '?per_page=0'), 400, 'validation_failed');
    expectError(await list(p.owner.accessToken, '?per_page=101'), 400, 'validation_failed');
    expectError(await list(p.owner.accessToken, '?page=0'), 400, 'validation_failed');
  });
});

describe('get_room_invite', () => {
  const get = (token: string | undefined, code: string, roomId = p.roomId) => app.request('GET', invitesPath(roomId, code), jsonRequest({ token }));

  it('answers a one-element array to the owner and the event invitee', async () => {
    const code = await insertInvite(app, p.roomId, p.owner, { expiration: new Date('2030-01-01T00:00:00Z') });
    for (const user of [p.owner, p.invitee]) {
      const response = await get(user.accessToken, code);
      expect(response.status).toBe(200);
      const body = parse<RoomInvite[]>(response);
      expect(body).toHaveLength(1);
      expect(body[0]).toMatchObject({ invite_code: code, room: p.roomId, active: true, expiration: '2030-01-01T00:00:00.000Z' });
    }
  });

  it('is 404 for a stranger, an unknown code and a code of another room; 401 without a token; 400 for non-UUIDs', async () => {
    const code = await insertInvite(app, p.roomId, p.owner);
    const otherRoom = await insertRoom(app, p.owner);
    const foreign = await insertInvite(app, otherRoom, p.owner);
    expectError(await get(p.stranger.accessToken, code), 404, 'not_found');
    expectError(await get(p.owner.accessToken, crypto.randomUUID()), 404, 'not_found');
    expectError(await get(p.owner.accessToken, foreign), 404, 'not_found');
    expectError(await get(undefined, code), 401, 'unauthorized');
    expectError(await get(p.owner.accessToken, 'abc'), 400, 'validation_failed');
    expectError(await get(p.owner.accessToken, code, 'abc'), 400, 'validation_failed');
  });

  it('does not accept a guest’s invite code as authorization', async () => {
    const code = await insertInvite(app, p.roomId, p.owner);
    expectError(await app.request('GET', invitesPath(p.roomId, code), jsonRequest({ authorization: `InviteCode ${code}` })), 401, 'unauthorized');
  });
});

describe('update_room_invite', () => {
  const put = (token: string | undefined, code: string, body: unknown, roomId = p.roomId) =>
    app.request('PUT', invitesPath(roomId, code), jsonRequest({ token }, body));

  it('sets and clears the expiry, recording who changed it and when', async () => {
    const code = await insertInvite(app, p.roomId, p.owner);
    await dbOf(app)
      .updateTable('room_invites')
      .set({ updated_at: new Date('2026-01-01T00:00:00Z') })
      .where('code', '=', code)
      .execute();
    const set = await put(p.owner.accessToken, code, { expiration: '2031-01-31T23:59:59Z' });
    expect(set.status, set.text_).toBe(200);
    const invite = parse<RoomInvite>(set);
    expect(invite.expiration).toBe('2031-01-31T23:59:59.000Z');
    expect(invite.updated_by.id).toBe(p.owner.id);
    expect(Date.parse(invite.updated)).toBeGreaterThan(Date.parse('2026-01-02T00:00:00Z'));
    const cleared = await put(p.owner.accessToken, code, { expiration: null });
    expect(parse<RoomInvite>(cleared).expiration).toBeNull();
  });

  it('refuses an empty body, a body without expiration and a malformed date', async () => {
    const code = await insertInvite(app, p.roomId, p.owner);
    expectError(await put(p.owner.accessToken, code, {}), 400, 'validation_failed');
    expectError(await put(p.owner.accessToken, code, { other: 1 }), 400, 'validation_failed');
    expectError(await put(p.owner.accessToken, code, { expiration: '31.01.2031' }), 400, 'validation_failed');
  });

  it('is the owner’s only: 404 for the invitee, a stranger and a code of another room; 401 without a token', async () => {
    const code = await insertInvite(app, p.roomId, p.owner);
    const foreign = await insertInvite(app, await insertRoom(app, p.owner), p.owner);
    const body = { expiration: '2031-01-01T00:00:00Z' };
    expectError(await put(p.invitee.accessToken, code, body), 404, 'not_found');
    expectError(await put(p.stranger.accessToken, code, body), 404, 'not_found');
    expectError(await put(p.owner.accessToken, foreign, body), 404, 'not_found');
    expectError(await put(undefined, code, body), 401, 'unauthorized');
    const stored = await dbOf(app).selectFrom('room_invites').select('expiration').where('code', 'in', [code, foreign]).execute();
    expect(stored.map((r) => r.expiration)).toEqual([null, null]);
  });
});

describe('delete_room_invite', () => {
  const del = (token: string | undefined, code: string, roomId = p.roomId) => app.request('DELETE', invitesPath(roomId, code), jsonRequest({ token }));

  it('deactivates the code, keeps it listed and answers 200 with it', async () => {
    const code = await insertInvite(app, p.roomId, p.owner);
    const response = await del(p.owner.accessToken, code);
    expect(response.status, response.text_).toBe(200);
    expect(parse<RoomInvite>(response)).toMatchObject({ invite_code: code, active: false });
    const listed = parse<RoomInvite[]>(await app.request('GET', invitesPath(p.roomId), jsonRequest({ token: p.owner.accessToken })));
    expect(listed).toMatchObject([{ invite_code: code, active: false }]);
    // deleting again changes nothing and still answers the code
    expect(parse<RoomInvite>(await del(p.owner.accessToken, code)).active).toBe(false);
  });

  it('is the owner’s only: 404 for the invitee, a stranger, an unknown code; 401 without a token', async () => {
    const code = await insertInvite(app, p.roomId, p.owner);
    expectError(await del(p.invitee.accessToken, code), 404, 'not_found');
    expectError(await del(p.stranger.accessToken, code), 404, 'not_found');
    expectError(await del(p.owner.accessToken, crypto.randomUUID()), 404, 'not_found');
    expectError(await del(undefined, code), 401, 'unauthorized');
    expectError(await del(p.owner.accessToken, 'not-a-code'), 400, 'validation_failed');
    const stored = await dbOf(app).selectFrom('room_invites').select('active').where('code', '=', code).executeTakeFirstOrThrow();
    expect(stored.active).toBe(true);
  });
});
