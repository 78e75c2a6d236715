/**
 * Streaming targets: who may do what. Owner and event invitee read, only the owner writes, and only
 * the owner sees `streaming_key`; a stranger gets 404 (never 403) and an anonymous caller 401.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { cast, headersOf, NOT_A_UUID, TARGET, UNKNOWN_ID, type Cast } from '../../support/room-content.js';
import { useTestApp, type TestUser } from '../../support/test-app.js';

const app = useTestApp();
let c: Cast;
beforeEach(async () => {
  c = await cast(app);
});

const base = (roomId: string) => `/v1/rooms/${roomId}/streaming_targets`;
const call = (method: string, path: string, user: TestUser | undefined, body?: unknown) =>
  app.request(method, path, {
    headers: headersOf(user, body === undefined ? undefined : 'application/json'),
    body: body === undefined ? undefined : JSON.stringify(body),
  });

async function createTarget(roomId = c.roomId, body: Record<string, unknown> = TARGET): Promise<string> {
  const res = await call('POST', base(roomId), c.owner, body);
  expect(res.status, res.text_).toBe(201);
  return JSON.parse(res.text_).id;
}

describe('create_room_streaming_target', () => {
  it('creates a target for the owner (201) with every field, the key included', async () => {
    const res = await call('POST', base(c.roomId), c.owner, TARGET);
    expect(res.status).toBe(201);
    const body = JSON.parse(res.text_);
    expect(body).toEqual({ id: expect.any(String), ...TARGET });
    const read = await call('GET', `${base(c.roomId)}/${body.id}`, c.owner);
    expect(JSON.parse(read.text_)).toEqual(body);
  });

  it.each([
    ['invitee', 404],
    ['stranger', 404],
    ['anonymous', 401],
  ] as const)('refuses the %s (%i) and stores nothing', async (who, status) => {
    const user = who === 'anonymous' ? undefined : c[who];
    expect((await call('POST', base(c.roomId), user, TARGET)).status).toBe(status);
    const list = await call('GET', base(c.roomId), c.owner);
    expect(JSON.parse(list.text_)).toEqual([]);
  });

  it('answers 404 for an unknown room and 400 for a room id that is not a uuid', async () => {
    expect((await call('POST', base(UNKNOWN_ID), c.owner, TARGET)).status).toBe(404);
    const bad = await call('POST', base(NOT_A_UUID), c.owner, TARGET);
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text_).code).toBe('validation_failed');
  });
});

describe('reading: get_room_streaming_targets and get_room_streaming_target', () => {
  it('shows the owner the key and the invitee everything but the key', async () => {
    const id = await createTarget();
    const { streaming_key: _key, ...withoutKey } = TARGET;

    const ownerList = await call('GET', base(c.roomId), c.owner);
    expect(ownerList.status).toBe(200);
    expect(JSON.parse(ownerList.text_)).toEqual([{ id, ...TARGET }]);
    const ownerOne = await call('GET', `${base(c.roomId)}/${id}`, c.owner);
    expect(JSON.parse(ownerOne.text_)).toEqual({ id, ...TARGET });

    const inviteeList = await call('GET', base(c.roomId), c.invitee);
    expect(inviteeList.status).toBe(200);
    expect(JSON.parse(inviteeList.text_)).toEqual([{ id, ...withoutKey }]);
    const inviteeOne = await call('GET', `${base(c.roomId)}/${id}`, c.invitee);
    expect(inviteeOne.status).toBe(200);
    expect(JSON.parse(inviteeOne.text_)).toEqual({ id, ...withoutKey });
    expect(inviteeOne.text_).not.toContain(TARGET.streaming_key);
  });

  it('answers 404 to a stranger and 401 to an anonymous caller', async () => {
    const id = await createTarget();
    for (const path of [base(c.roomId), `${base(c.roomId)}/${id}`]) {
      const stranger = await call('GET', path, c.stranger);
      expect(stranger.status).toBe(404);
      expect(JSON.parse(stranger.text_).code).toBe('not_found');
      expect((await call('GET', path, undefined)).status).toBe(401);
    }
  });

  it('does not find a target through another room of the same owner, nor an unknown one', async () => {
    const id = await createTarget();
    expect((await call('GET', `${base(c.otherRoomId)}/${id}`, c.owner)).status).toBe(404);
    expect((await call('GET', `${base(c.roomId)}/${UNKNOWN_ID}`, c.owner)).status).toBe(404);
    expect(JSON.parse((await call('GET', base(c.otherRoomId), c.owner)).text_)).toEqual([]);
  });

  it('answers 400 for ids that are not uuids', async () => {
    expect((await call('GET', base(NOT_A_UUID), c.owner)).status).toBe(400);
    expect((await call('GET', `${base(c.roomId)}/${NOT_A_UUID}`, c.owner)).status).toBe(400);
  });
});

describe('patch_room_streaming_target', () => {
  it('changes the given fields for the owner and keeps the others', async () => {
    const id = await createTarget();
    const res = await call('PATCH', `${base(c.roomId)}/${id}`, c.owner, { name: 'Backup', streaming_endpoint: 'rtmp://backup.example.org/app' });
    expect(res.status).toBe(200);
    const expected = { id, ...TARGET, name: 'Backup', streaming_endpoint: 'rtmp://backup.example.org/app' };
    expect(JSON.parse(res.text_)).toEqual(expected);
    expect(JSON.parse((await call('GET', `${base(c.roomId)}/${id}`, c.owner)).text_)).toEqual(expected);
  });

  it.each([
    ['invitee', 404],
    ['stranger', 404],
    ['anonymous', 401],
  ] as const)('refuses the %s (%i) and changes nothing', async (who, status) => {
    const id = await createTarget();
    const user = who === 'anonymous' ? undefined : c[who];
    expect((await call('PATCH', `${base(c.roomId)}/${id}`, user, { name: 'Hijacked' })).status).toBe(status);
    expect(JSON.parse((await call('GET', `${base(c.roomId)}/${id}`, c.owner)).text_).name).toBe(TARGET.name);
  });

  it('answers 404 for a target of another room or an unknown one, 400 for non-uuid ids', async () => {
    const id = await createTarget();
    expect((await call('PATCH', `${base(c.otherRoomId)}/${id}`, c.owner, { name: 'x' })).status).toBe(404);
    expect((await call('PATCH', `${base(c.roomId)}/${UNKNOWN_ID}`, c.owner, { name: 'x' })).status).toBe(404);
    expect((await call('PATCH', `${base(c.roomId)}/${NOT_A_UUID}`, c.owner, { name: 'x' })).status).toBe(400);
    expect((await call('PATCH', `${base(NOT_A_UUID)}/${id}`, c.owner, { name: 'x' })).status).toBe(400);
  });
});

describe('delete_room_streaming_target', () => {
  it('removes the target for the owner (204); a second delete is 404', async () => {
    const id = await createTarget();
    const res = await call('DELETE', `${base(c.roomId)}/${id}`, c.owner);
    expect(res.status).toBe(204);
    expect(res.text_).toBe('');
    expect((await call('GET', `${base(c.roomId)}/${id}`, c.owner)).status).toBe(404);
    expect((await call('DELETE', `${base(c.roomId)}/${id}`, c.owner)).status).toBe(404);
  });

  it.each([
    ['invitee', 404],
    ['stranger', 404],
    ['anonymous', 401],
  ] as const)('refuses the %s (%i) and keeps the target', async (who, status) => {
    const id = await createTarget();
    const user = who === 'anonymous' ? undefined : c[who];
    expect((await call('DELETE', `${base(c.roomId)}/${id}`, user)).status).toBe(status);
    expect((await call('GET', `${base(c.roomId)}/${id}`, c.owner)).status).toBe(200);
  });

  it('answers 404 for a target of another room, 400 for non-uuid ids', async () => {
    const id = await createTarget();
    expect((await call('DELETE', `${base(c.otherRoomId)}/${id}`, c.owner)).status).toBe(404);
    expect((await call('GET', `${base(c.roomId)}/${id}`, c.owner)).status).toBe(200);
    expect((await call('DELETE', `${base(c.roomId)}/${NOT_A_UUID}`, c.owner)).status).toBe(400);
  });
});
