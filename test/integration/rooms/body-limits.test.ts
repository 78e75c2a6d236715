/**
 * The 413 and 415 that every JSON-body operation of rooms, SIP, room invites and streaming targets
 * names in the contract: a body over `[http] body_limit_bytes` is 413 `payload_too_large`, a body of
 * another media type 415 `invalid_content_type`, and neither changes anything.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { insertInvite } from '../../support/invites.js';
import { TARGET } from '../../support/room-content.js';
import { createRoom, dbOf } from '../../support/rooms.js';
import { useTestApp, type TestUser } from '../../support/test-app.js';

const BODY_LIMIT = 1024;
const app = useTestApp({ http: { body_limit_bytes: BODY_LIMIT } });

let ada: TestUser;
let ids: { room: string; invite: string; target: string };
beforeEach(async () => {
  ada = await app.login('ada');
  const room = (await createRoom(app, ada)).id;
  const invite = await insertInvite(app, room, ada);
  const { id: target } = await dbOf(app)
    .insertInto('streaming_targets')
    .values({ room_id: room, ...TARGET, kind: 'custom' })
    .returning('id')
    .executeTakeFirstOrThrow();
  ids = { room, invite, target };
});

/** Every operation here with a JSON body: a valid body, padded past the limit by an ignored field. */
const operations: { operation: string; method: string; path: () => string; body: Record<string, unknown> }[] = [
  { operation: 'create_room', method: 'POST', path: () => '/v1/rooms', body: { enable_sip: false } },
  { operation: 'patch_room', method: 'PATCH', path: () => `/v1/rooms/${ids.room}`, body: { waiting_room: true } },
  { operation: 'put_room_sip_config', method: 'PUT', path: () => `/v1/rooms/${ids.room}/sip`, body: { lobby: true } },
  { operation: 'create_room_invite', method: 'POST', path: () => `/v1/rooms/${ids.room}/invites`, body: {} },
  { operation: 'update_room_invite', method: 'PUT', path: () => `/v1/rooms/${ids.room}/invites/${ids.invite}`, body: { expiration: null } },
  { operation: 'verify_invite_code', method: 'POST', path: () => '/v1/invite/verify', body: { invite_code: '6f2d8a41-7c3e-4b95-9e1a-2c4d6b8f0e13' } },
  { operation: 'create_room_streaming_target', method: 'POST', path: () => `/v1/rooms/${ids.room}/streaming_targets`, body: TARGET },
  { operation: 'patch_room_streaming_target', method: 'PATCH', path: () => `/v1/rooms/${ids.room}/streaming_targets/${ids.target}`, body: { name: 'Backup' } },
];

/** What any of these operations could change. */
async function state() {
  const db = dbOf(app);
  const all = (table: 'rooms' | 'sip_configs' | 'room_invites' | 'streaming_targets') => db.selectFrom(table).selectAll().execute();
  return { rooms: await all('rooms'), sip: await all('sip_configs'), invites: await all('room_invites'), targets: await all('streaming_targets') };
}

describe.each(operations)('$operation', ({ method, path, body }) => {
  const send = (contentType: string, text: string) =>
    app.request(method, path(), { headers: { authorization: `Bearer ${ada.accessToken}`, 'content-type': contentType }, body: text });

  it('answers 413 payload_too_large to a body over the limit and changes nothing', async () => {
    const before = await state();
    const res = await send('application/json', JSON.stringify({ ...body, padding: 'x'.repeat(BODY_LIMIT) }));
    expect(res.status, res.text_).toBe(413);
    expect(JSON.parse(res.text_)).toMatchObject({ code: 'payload_too_large', status: '413' });
    expect(await state()).toEqual(before);
  });

  it('answers 415 invalid_content_type to a body of another media type and changes nothing', async () => {
    const before = await state();
    const res = await send('text/plain', JSON.stringify(body));
    expect(res.status, res.text_).toBe(415);
    expect(JSON.parse(res.text_)).toMatchObject({ code: 'invalid_content_type', status: '415' });
    expect(await state()).toEqual(before);
  });
});
