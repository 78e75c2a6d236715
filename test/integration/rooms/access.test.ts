/**
 * The access matrix of the rooms and SIP operations: the room's owner, an invitee of its event, a
 * stranger (another logged-in user) and an anonymous caller. No access is 404, never 403; a refused
 * write changes nothing.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/test-app.js';
import { dbOf, json, roomWithParties, type RoomWithParties } from '../../support/rooms.js';

const app = useTestApp();
let cast: RoomWithParties;
beforeEach(async () => {
  cast = await roomWithParties(app, { password: 'secret', enable_sip: true });
});

type Party = 'owner' | 'invitee' | 'stranger';

interface Case {
  operation: string;
  method: string;
  path: (roomId: string) => string;
  body?: unknown;
  expected: Record<Party, number>;
}

const room = (id: string) => `/v1/rooms/${id}`;
const cases: Case[] = [
  { operation: 'get_room', method: 'GET', path: room, expected: { owner: 200, invitee: 200, stranger: 404 } },
  { operation: 'patch_room', method: 'PATCH', path: room, body: { waiting_room: true }, expected: { owner: 200, invitee: 404, stranger: 404 } },
  { operation: 'delete_room', method: 'DELETE', path: room, expected: { owner: 204, invitee: 404, stranger: 404 } },
  { operation: 'get_room_tariff', method: 'GET', path: (id) => `${room(id)}/tariff`, expected: { owner: 200, invitee: 200, stranger: 404 } },
  { operation: 'get_room_event', method: 'GET', path: (id) => `${room(id)}/event`, expected: { owner: 200, invitee: 200, stranger: 404 } },
  { operation: 'get_room_sip_config', method: 'GET', path: (id) => `${room(id)}/sip`, expected: { owner: 200, invitee: 404, stranger: 404 } },
  {
    operation: 'put_room_sip_config',
    method: 'PUT',
    path: (id) => `${room(id)}/sip`,
    body: { lobby: true },
    expected: { owner: 200, invitee: 404, stranger: 404 },
  },
  { operation: 'delete_room_sip_config', method: 'DELETE', path: (id) => `${room(id)}/sip`, expected: { owner: 204, invitee: 404, stranger: 404 } },
];

/** What the writes would change, to show that a refused one changed nothing. */
async function roomState(roomId: string) {
  const db = dbOf(app);
  return {
    room: await db.selectFrom('rooms').selectAll().where('id', '=', roomId).executeTakeFirst(),
    sip: await db.selectFrom('sip_configs').selectAll().where('room_id', '=', roomId).executeTakeFirst(),
  };
}

describe.each(cases)('$operation', ({ method, path, body, expected }) => {
  it.each(['owner', 'invitee', 'stranger'] as const)('answers %s as the matrix says', async (party) => {
    const before = await roomState(cast.room.id);
    const res = await app.request(method, path(cast.room.id), json(cast[party].accessToken, body));
    expect(res.status, res.text_).toBe(expected[party]);
    if (res.status === 404) {
      expect(JSON.parse(res.text_)).toMatchObject({ code: 'not_found', status: '404' });
      expect(await roomState(cast.room.id)).toEqual(before);
    }
  });

  it('refuses an anonymous caller with 401 and changes nothing', async () => {
    const before = await roomState(cast.room.id);
    const res = await app.request(method, path(cast.room.id), json(undefined, body));
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await roomState(cast.room.id)).toEqual(before);
  });

  it('answers 404 for a room that does not exist, even to a user', async () => {
    const res = await app.request(method, path('6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b'), json(cast.owner.accessToken, body));
    expect(res.status).toBe(404);
  });

  it('answers 400 validation_failed for a room id that is not a UUID', async () => {
    const res = await app.request(method, path('12345'), json(cast.owner.accessToken, body));
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text_)).toMatchObject({ code: 'validation_failed', errors: [{ field: 'room_id', code: 'invalid_uuid' }] });
  });
});

describe('get_rooms', () => {
  const ids = async (token?: string) => {
    const res = await app.request('GET', '/v1/rooms', json(token));
    return { status: res.status, ids: res.status === 200 ? (JSON.parse(res.text_) as { id: string }[]).map((r) => r.id) : [] };
  };
  it('lists the room to its owner and to the event invitee, not to a stranger', async () => {
    expect(await ids(cast.owner.accessToken)).toEqual({ status: 200, ids: [cast.room.id] });
    expect(await ids(cast.invitee.accessToken)).toEqual({ status: 200, ids: [cast.room.id] });
    expect(await ids(cast.stranger.accessToken)).toEqual({ status: 200, ids: [] });
  });
  it('refuses an anonymous caller with 401', async () => {
    expect((await ids()).status).toBe(401);
  });
});

describe('create_room', () => {
  it('creates a room for any logged-in user, owned by the caller', async () => {
    const res = await app.request('POST', '/v1/rooms', json(cast.stranger.accessToken, { enable_sip: false }));
    expect(res.status).toBe(201);
    expect(JSON.parse(res.text_).created_by).toBe(cast.stranger.id);
  });
  it('refuses an anonymous caller with 401 and creates nothing', async () => {
    const res = await app.request('POST', '/v1/rooms', json(undefined, { enable_sip: false }));
    expect(res.status).toBe(401);
    const { count } = await dbOf(app)
      .selectFrom('rooms')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .executeTakeFirstOrThrow();
    expect(Number(count)).toBe(1);
  });
});
