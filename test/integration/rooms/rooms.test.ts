/** create_room, get_room, patch_room: fields, defaults, limits at their edges, malformed bodies. */
import { beforeEach, describe, expect, it } from 'vitest';
import { useTestApp, type TestUser } from '../../support/test-app.js';
import { createRoom, dbOf, json, type Room } from '../../support/rooms.js';

const app = useTestApp();
let ada: TestUser;
beforeEach(async () => {
  ada = await app.login('ada');
});

const post = (body: unknown, headers: Record<string, string> = {}) => {
  const init = json(ada.accessToken, body);
  return app.request('POST', '/v1/rooms', { ...init, headers: { ...init.headers, ...headers } });
};
const patch = (roomId: string, body: unknown) => app.request('PATCH', `/v1/rooms/${roomId}`, json(ada.accessToken, body));
const roomRow = (id: string) => dbOf(app).selectFrom('rooms').selectAll().where('id', '=', id).executeTakeFirst();
const sipRow = (roomId: string) => dbOf(app).selectFrom('sip_configs').selectAll().where('room_id', '=', roomId).executeTakeFirst();

describe('create_room', () => {
  it('answers 201 with the room, owned by the caller, readable afterwards', async () => {
    const before = Date.now();
    const res = await post({ password: 'correct-horse', enable_sip: false, waiting_room: true });
    expect(res.status).toBe(201);
    const room = JSON.parse(res.text_) as Room;
    expect(room).toMatchObject({ created_by: ada.id, password: 'correct-horse', waiting_room: true });
    // the database clock and ours may differ by a little; a minute tells "now" from anything stale
    expect(Math.abs(Date.parse(room.created_at) - before)).toBeLessThan(60_000);
    const read = await app.api(ada.accessToken).GET('/rooms/{room_id}', { params: { path: { room_id: room.id } } });
    expect(read.data).toEqual(room);
  });

  it.each([
    ['absent', {}],
    ['empty', { password: '' }],
  ])('creates a room without a password when the password is %s (no password field)', async (_, extra) => {
    const res = await post({ enable_sip: false, ...extra });
    expect(res.status).toBe(201);
    const room = JSON.parse(res.text_) as Room;
    expect(room).not.toHaveProperty('password');
    expect((await roomRow(room.id))?.password).toBeNull();
  });

  it('defaults waiting_room to false', async () => {
    const res = await post({ enable_sip: false });
    expect(JSON.parse(res.text_).waiting_room).toBe(false);
  });

  it('accepts a password of 255 characters and refuses 256', async () => {
    const ok = await post({ password: 'p'.repeat(255), enable_sip: false });
    expect(ok.status).toBe(201);
    expect(JSON.parse(ok.text_).password).toBe('p'.repeat(255));
    const tooLong = await post({ password: 'p'.repeat(256), enable_sip: false });
    expect(tooLong.status).toBe(400);
    expect(JSON.parse(tooLong.text_)).toMatchObject({ code: 'validation_failed', errors: [{ field: 'password', code: 'invalid_length' }] });
  });

  it('with enable_sip creates a SIP config: 10-digit call-in id and pin, lobby off', async () => {
    const room = await createRoom(app, ada, { enable_sip: true });
    const sip = await sipRow(room.id);
    expect(sip).toMatchObject({ sip_id: expect.stringMatching(/^[0-9]{10}$/), password: expect.stringMatching(/^[0-9]{10}$/), lobby: false });
  });

  it('without enable_sip creates no SIP config', async () => {
    const room = await createRoom(app, ada, { enable_sip: false });
    expect(await sipRow(room.id)).toBeUndefined();
  });

  it('gives every room its own call-in id', async () => {
    const rooms = await Promise.all(Array.from({ length: 20 }, () => createRoom(app, ada, { enable_sip: true })));
    const sips = await dbOf(app).selectFrom('sip_configs').select('sip_id').execute();
    expect(sips).toHaveLength(rooms.length);
    expect(new Set(sips.map((s) => s.sip_id)).size).toBe(rooms.length);
  });

  it('ignores unknown fields', async () => {
    const res = await post({ enable_sip: false, e2e_encryption: true });
    expect(res.status).toBe(201);
    expect(JSON.parse(res.text_)).not.toHaveProperty('e2e_encryption');
  });

  it.each([
    ['without enable_sip', { password: 'x' }, 'enable_sip', 'value_required'],
    ['with a non-boolean waiting_room', { enable_sip: false, waiting_room: 'maybe' }, 'waiting_room', 'invalid_type'],
    ['with a non-string password', { enable_sip: false, password: { a: 1 } }, 'password', 'invalid_type'],
  ])('refuses a body %s with 400 and creates nothing', async (_, body, field, code) => {
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text_)).toMatchObject({ code: 'validation_failed', errors: [{ field, code }] });
    expect(await dbOf(app).selectFrom('rooms').select('id').execute()).toEqual([]);
  });

  it.each([
    ['malformed JSON', '{"enable_sip": tru', 'invalid_json'],
    ['a JSON array', '[]', 'validation_failed'],
    // express.json parses objects and arrays only (strict mode)
    ['a bare JSON string', '"room"', 'invalid_json'],
  ])('refuses %s with 400', async (_, raw, code) => {
    const res = await post(raw);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text_).code).toBe(code);
    expect(await dbOf(app).selectFrom('rooms').select('id').execute()).toEqual([]);
  });

  it('refuses a body that is not JSON with 415', async () => {
    const res = await post('enable_sip=false', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(res.status).toBe(415);
  });
});

describe('patch_room', () => {
  let room: Room;
  beforeEach(async () => {
    room = await createRoom(app, ada, { password: 'old-secret', waiting_room: false });
  });

  it('changes the given fields and keeps the others', async () => {
    const res = await patch(room.id, { waiting_room: true });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text_)).toEqual({ ...room, waiting_room: true });
    const again = await patch(room.id, { password: 'new-secret' });
    expect(JSON.parse(again.text_)).toEqual({ ...room, waiting_room: true, password: 'new-secret' });
    expect(await roomRow(room.id)).toMatchObject({ password: 'new-secret', waiting_room: true });
  });

  it.each([
    ['null', null],
    ['the empty string', ''],
  ])('removes the password when it is %s', async (_, password) => {
    const res = await patch(room.id, { password });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text_)).not.toHaveProperty('password');
    expect((await roomRow(room.id))?.password).toBeNull();
  });

  it('accepts a password of 255 characters and refuses 256', async () => {
    expect((await patch(room.id, { password: 'q'.repeat(255) })).status).toBe(200);
    const tooLong = await patch(room.id, { password: 'q'.repeat(256) });
    expect(tooLong.status).toBe(400);
    expect(JSON.parse(tooLong.text_)).toMatchObject({ errors: [{ field: 'password', code: 'invalid_length' }] });
    expect((await roomRow(room.id))?.password).toBe('q'.repeat(255));
  });

  it.each([
    ['an empty body', {}],
    ['a body of unknown fields only', { e2e_encryption: true }],
  ])('refuses %s with 400 missing_values', async (_, body) => {
    const res = await patch(room.id, body);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text_)).toMatchObject({ code: 'validation_failed', errors: [{ code: 'missing_values' }] });
  });

  it.each([
    ['malformed JSON', '{"waiting_room": ', 'invalid_json'],
    ['a non-boolean waiting_room', { waiting_room: 'yes please' }, 'validation_failed'],
    ['an object as password', { password: { nested: true } }, 'validation_failed'],
  ])('refuses %s with 400 and changes nothing', async (_, body, code) => {
    const res = await patch(room.id, body);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text_).code).toBe(code);
    expect(await roomRow(room.id)).toMatchObject({ password: 'old-secret', waiting_room: false });
  });
});
