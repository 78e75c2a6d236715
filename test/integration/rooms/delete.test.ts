/**
 * delete_room: the room goes with everything it carries (event, invites, SIP config, streaming
 * targets, assets with their files, bans), and nothing of other rooms.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createFileAssetStorage, newStorageKey, type AssetStorage } from '../../../src/domain/assets/asset-storage.js';
import { startTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { createEventFor, createRoom, dbOf, inviteToEvent, json, type Room } from '../../support/rooms.js';
import { insertInvite } from '../../support/invites.js';

let app: TestApp;
let assetsDir: string;
let storage: AssetStorage;
let ada: TestUser;
let bob: TestUser;
beforeAll(async () => {
  assetsDir = await mkdtemp(join(tmpdir(), 'convene-rooms-delete-'));
  app = await startTestApp({ assets: { dir: assetsDir } });
  storage = await createFileAssetStorage(assetsDir); // the same directory the instance stores into
});
afterAll(async () => {
  await app?.close();
  await rm(assetsDir, { recursive: true, force: true });
});
beforeEach(async () => {
  await app.reset();
  [ada, bob] = await Promise.all([app.login('ada'), app.login('bob')]);
});

/** A room of `owner` carrying one of everything, with `guest` invited to its event. */
async function furnishedRoom(owner: TestUser, guest: TestUser): Promise<{ room: Room; storageKey: string }> {
  const db = dbOf(app);
  const room = await createRoom(app, owner, { enable_sip: true, password: 'secret' });
  const eventId = await createEventFor(app, room.id, owner);
  await inviteToEvent(app, eventId, guest, owner);
  await db.insertInto('event_favorites').values({ user_id: guest.id, event_id: eventId }).execute();
  await insertInvite(app, room.id, owner);
  await db
    .insertInto('streaming_targets')
    .values({
      room_id: room.id,
      name: 'Stream',
      streaming_endpoint: 'rtmp://stream.example/live',
      streaming_key: 'key',
      public_url: 'https://stream.example/watch',
    })
    .execute();
  const storageKey = newStorageKey();
  await storage.put(storageKey, new TextEncoder().encode('meeting notes'));
  await db.insertInto('assets').values({ room_id: room.id, filename: 'notes.txt', size: 13, storage_key: storageKey }).execute();
  await db.insertInto('room_bans').values({ room_id: room.id, user_id: guest.id, created_by: owner.id }).execute();
  return { room, storageKey };
}

/** How many rows each table holds for the room (the event's dependants through its event). */
async function rowsOf(roomId: string) {
  const db = dbOf(app);
  const count = async (table: 'sip_configs' | 'room_invites' | 'streaming_targets' | 'assets' | 'room_bans' | 'events') =>
    (await db.selectFrom(table).select('room_id').where('room_id', '=', roomId).execute()).length;
  const eventIds = (await db.selectFrom('events').select('id').where('room_id', '=', roomId).execute()).map((e) => e.id);
  const byEvent = async (table: 'event_invites' | 'event_favorites') =>
    eventIds.length === 0 ? 0 : (await db.selectFrom(table).select('event_id').where('event_id', 'in', eventIds).execute()).length;
  return {
    rooms: (await db.selectFrom('rooms').select('id').where('id', '=', roomId).execute()).length,
    sip_configs: await count('sip_configs'),
    room_invites: await count('room_invites'),
    streaming_targets: await count('streaming_targets'),
    assets: await count('assets'),
    room_bans: await count('room_bans'),
    events: await count('events'),
    event_invites: await byEvent('event_invites'),
    event_favorites: await byEvent('event_favorites'),
  };
}

const everything = {
  rooms: 1,
  sip_configs: 1,
  room_invites: 1,
  streaming_targets: 1,
  assets: 1,
  room_bans: 1,
  events: 1,
  event_invites: 1,
  event_favorites: 1,
};
const nothing = Object.fromEntries(Object.keys(everything).map((k) => [k, 0]));

describe('delete_room', () => {
  it('deletes the room with everything it carries, files included, and nothing of another room', async () => {
    const doomed = await furnishedRoom(ada, bob);
    const kept = await furnishedRoom(bob, ada);
    expect(await rowsOf(doomed.room.id)).toEqual(everything);

    const res = await app.request('DELETE', `/v1/rooms/${doomed.room.id}`, json(ada.accessToken));
    expect(res.status).toBe(204);
    expect(res.text_).toBe('');

    expect(await rowsOf(doomed.room.id)).toEqual(nothing);
    expect(await rowsOf(kept.room.id)).toEqual(everything);
    expect((await readdir(assetsDir)).sort()).toEqual([kept.storageKey]);
    // the users stay
    expect((await dbOf(app).selectFrom('users').select('id').execute()).length).toBe(2);
  });

  it('leaves a room that is gone: reads, changes and a second delete answer 404', async () => {
    const room = await createRoom(app, ada, { enable_sip: true });
    expect((await app.request('DELETE', `/v1/rooms/${room.id}`, json(ada.accessToken))).status).toBe(204);
    for (const [method, path, body] of [
      ['GET', `/v1/rooms/${room.id}`, undefined],
      ['PATCH', `/v1/rooms/${room.id}`, { waiting_room: true }],
      ['DELETE', `/v1/rooms/${room.id}`, undefined],
      ['GET', `/v1/rooms/${room.id}/sip`, undefined],
    ] as const) {
      expect((await app.request(method, path, json(ada.accessToken, body))).status).toBe(404);
    }
    expect((await app.api(ada.accessToken).GET('/rooms')).data).toEqual([]);
  });

  it('deletes a room that carries nothing', async () => {
    const room = await createRoom(app, ada);
    expect((await app.request('DELETE', `/v1/rooms/${room.id}`, json(ada.accessToken))).status).toBe(204);
    expect(await rowsOf(room.id)).toEqual(nothing);
  });
});
