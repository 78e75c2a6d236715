/** The SIP operations: create (201) or modify (200), read and delete; pin limits; malformed bodies. */
import { beforeEach, describe, expect, it } from 'vitest';
import { useTestApp, type TestUser } from '../../support/test-app.js';
import { createRoom, dbOf, json, type Room, type SipConfig } from '../../support/rooms.js';

const app = useTestApp();
let ada: TestUser;
let room: Room;
beforeEach(async () => {
  ada = await app.login('ada');
  room = await createRoom(app, ada, { enable_sip: false });
});

const sipPath = (roomId: string) => `/v1/rooms/${roomId}/sip`;
const put = (body: unknown, roomId = room.id) => app.request('PUT', sipPath(roomId), json(ada.accessToken, body));
const get = (roomId = room.id) => app.request('GET', sipPath(roomId), json(ada.accessToken));
const del = (roomId = room.id) => app.request('DELETE', sipPath(roomId), json(ada.accessToken));
const rows = () => dbOf(app).selectFrom('sip_configs').selectAll().execute();
const TEN_DIGITS = /^[0-9]{10}$/;

describe('put_room_sip_config', () => {
  it('creates the config with 201: a generated call-in id and pin, the given lobby', async () => {
    const res = await put({ lobby: true });
    expect(res.status).toBe(201);
    const config = JSON.parse(res.text_) as SipConfig;
    expect(config).toEqual({ room: room.id, sip_id: expect.stringMatching(TEN_DIGITS), password: expect.stringMatching(TEN_DIGITS), lobby: true });
    expect(JSON.parse((await get()).text_)).toEqual(config);
  });

  it('creates the config with the given pin (leading zeros kept) and lobby off by default', async () => {
    const res = await put({ password: '0012345678' });
    expect(res.status).toBe(201);
    expect(JSON.parse(res.text_)).toMatchObject({ password: '0012345678', lobby: false });
  });

  it('modifies an existing config with 200: only the given fields change, the call-in id stays', async () => {
    const created = JSON.parse((await put({ password: '1111111111' })).text_) as SipConfig;
    const lobby = await put({ lobby: true });
    expect(lobby.status).toBe(200);
    expect(JSON.parse(lobby.text_)).toEqual({ ...created, lobby: true });
    const pin = await put({ password: '2222222222' });
    expect(pin.status).toBe(200);
    expect(JSON.parse(pin.text_)).toEqual({ ...created, lobby: true, password: '2222222222' });
    expect(await rows()).toHaveLength(1);
  });

  it('modifies the config that enable_sip created', async () => {
    const sipRoom = await createRoom(app, ada, { enable_sip: true });
    const res = await put({ lobby: true }, sipRoom.id);
    expect(res.status).toBe(200);
  });

  it('lets exactly one of concurrent first PUTs create the config', async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => put({ lobby: i % 2 === 0 })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 201]);
    expect(await rows()).toHaveLength(1);
  });

  it('gives each room its own call-in id', async () => {
    const rooms = await Promise.all(Array.from({ length: 15 }, () => createRoom(app, ada)));
    const ids = await Promise.all(rooms.map(async (r) => (JSON.parse((await put({ lobby: false }, r.id)).text_) as SipConfig).sip_id));
    expect(new Set(ids).size).toBe(rooms.length);
  });

  it.each([
    ['9 digits', '123456789', 'invalid_format'],
    ['11 digits', '12345678901', 'invalid_length'],
    ['10 non-digits', '12345abcde', 'invalid_format'],
    ['10 characters with a space', '12345 6789', 'invalid_format'],
    ['the empty string', '', 'invalid_format'],
  ])('refuses a pin of %s with 400 and creates nothing', async (_, password, code) => {
    const res = await put({ password });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text_)).toMatchObject({
      code: 'validation_failed',
      errors: expect.arrayContaining([{ field: 'password', code, message: expect.any(String) }]),
    });
    expect(await rows()).toEqual([]);
  });

  it('refuses an invalid pin on modification and keeps the old one', async () => {
    await put({ password: '1234567890' });
    expect((await put({ password: '123456789' })).status).toBe(400);
    expect((await rows())[0]?.password).toBe('1234567890');
  });

  it.each([
    ['an empty body', {}, 'validation_failed'],
    ['a body of unknown fields only', { pin: '1234567890' }, 'validation_failed'],
    ['a non-boolean lobby', { lobby: 'on' }, 'validation_failed'],
    ['malformed JSON', '{"lobby": true', 'invalid_json'],
    ['a JSON array', '[]', 'validation_failed'],
  ])('refuses %s with 400 and creates nothing', async (_, body, code) => {
    const res = await put(body);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text_).code).toBe(code);
    expect(await rows()).toEqual([]);
  });
});

describe('get_room_sip_config', () => {
  it('answers 404 for a room without a SIP config', async () => {
    const res = await get();
    expect(res.status).toBe(404);
    expect(JSON.parse(res.text_).code).toBe('not_found');
  });
});

describe('delete_room_sip_config', () => {
  it('removes the config with 204; afterwards reads and deletes answer 404', async () => {
    await put({ lobby: true });
    const res = await del();
    expect(res.status).toBe(204);
    expect(res.text_).toBe('');
    expect(await rows()).toEqual([]);
    expect((await get()).status).toBe(404);
    expect((await del()).status).toBe(404);
  });

  it('answers 404 for a room without a SIP config', async () => {
    expect((await del()).status).toBe(404);
  });

  it('removes only that room’s config; a new PUT creates a fresh one with 201', async () => {
    const other = await createRoom(app, ada, { enable_sip: true });
    await put({ password: '5555555555' });
    await del();
    expect((await rows()).map((r) => r.room_id)).toEqual([other.id]);
    const again = await put({ lobby: false });
    expect(again.status).toBe(201);
    expect(JSON.parse(again.text_).password).toMatch(TEN_DIGITS);
  });
});
