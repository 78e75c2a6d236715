/**
 * get_room_tariff (the room creator's tariff) and get_room_event (the event using the room), for
 * users and for guests holding an invite code of the room (`Authorization: InviteCode <code>`).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import { createEventFor, createRoom, dbOf, inviteToEvent, roomWithParties, type RoomWithParties } from '../../support/rooms.js';
import { freshSourceAddress, insertInvite } from '../../support/invites.js';

let app: TestApp;
let cast: RoomWithParties;
beforeAll(async () => {
  app = await startTestApp({
    http: { trust_proxy: 1 }, // each guest request from an address of its own (failed codes count per source)
    tariffs: {
      claim: 'plan',
      definitions: {
        default: { quotas: {}, disabled_modules: [], disabled_features: [] },
        premium: { quotas: { room_participant_limit: 500 }, disabled_modules: [], disabled_features: [] },
      },
    },
  });
});
afterAll(() => app?.close());
beforeEach(async () => {
  await app.reset();
  cast = await roomWithParties(app);
});

type Credentials = { headers: Record<string, string> };
const asUser = (token: string): Credentials => ({ headers: { authorization: `Bearer ${token}` } });
const asGuest = (code: string): Credentials => ({ headers: { authorization: `InviteCode ${code}`, 'x-forwarded-for': freshSourceAddress() } });
const tariffOf = (roomId: string, init: Credentials) => app.request('GET', `/v1/rooms/${roomId}/tariff`, init);
const eventOf = (roomId: string, init: Credentials) => app.request('GET', `/v1/rooms/${roomId}/event`, init);

describe('get_room_tariff', () => {
  it('answers the creator’s tariff to the owner and to an invitee whose own tariff differs', async () => {
    const premium = await app.login('paying', { plan: 'premium' });
    const room = await createRoom(app, premium);
    await inviteToEvent(app, await createEventFor(app, room.id, premium), cast.invitee, premium);
    for (const reader of [premium, cast.invitee]) {
      const res = await tariffOf(room.id, asUser(reader.accessToken));
      expect(res.status).toBe(200);
      expect(JSON.parse(res.text_)).toMatchObject({ name: 'premium', quotas: { room_participant_limit: 500 } });
    }
    const own = await app.api(cast.invitee.accessToken).GET('/users/me/tariff');
    expect(own.data?.name).toBe('default');
  });

  it('answers the default tariff when the creator has none of their own', async () => {
    const res = await tariffOf(cast.room.id, asUser(cast.invitee.accessToken));
    expect(JSON.parse(res.text_)).toMatchObject({ name: 'default', quotas: {} });
  });
});

describe('get_room_event', () => {
  it('answers the event’s id, room, title and ad-hoc flag', async () => {
    const res = await eventOf(cast.room.id, asUser(cast.invitee.accessToken));
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text_)).toEqual({ id: cast.eventId, room_id: cast.room.id, title: 'Weekly planning', is_adhoc: false });
  });

  it('reports an ad-hoc event as such', async () => {
    const room = await createRoom(app, cast.owner);
    const eventId = await createEventFor(app, room.id, cast.owner, { title: 'Quick call', is_adhoc: true });
    const res = await eventOf(room.id, asUser(cast.owner.accessToken));
    expect(JSON.parse(res.text_)).toEqual({ id: eventId, room_id: room.id, title: 'Quick call', is_adhoc: true });
  });

  it('answers 404 to the owner of a room that no event uses', async () => {
    const room = await createRoom(app, cast.owner);
    const res = await eventOf(room.id, asUser(cast.owner.accessToken));
    expect(res.status).toBe(404);
    expect(JSON.parse(res.text_).code).toBe('not_found');
  });
});

describe('a guest with an invite code', () => {
  it('reads the tariff and the event of the code’s room', async () => {
    const code = await insertInvite(app, cast.room.id, cast.owner);
    const tariff = await tariffOf(cast.room.id, asGuest(code));
    expect(tariff.status, tariff.text_).toBe(200);
    expect(JSON.parse(tariff.text_).name).toBe('default');
    const event = await eventOf(cast.room.id, asGuest(code));
    expect(event.status).toBe(200);
    expect(JSON.parse(event.text_).id).toBe(cast.eventId);
  });

  it('gets 404 for another room, as if it did not exist', async () => {
    const other = await otherOwnersRoom();
    const code = await insertInvite(app, cast.room.id, cast.owner);
    expect((await tariffOf(other.id, asGuest(code))).status).toBe(404);
    expect((await eventOf(other.id, asGuest(code))).status).toBe(404);
  });

  it('gets 404 for the event of its room when no event uses it', async () => {
    const room = await createRoom(app, cast.owner);
    const code = await insertInvite(app, room.id, cast.owner);
    expect((await eventOf(room.id, asGuest(code))).status).toBe(404);
    expect((await tariffOf(room.id, asGuest(code))).status).toBe(200);
  });

  it.each([
    ['expired', { expiration: new Date(Date.now() - 1_000) }],
    ['inactive', { active: false }],
  ])('is refused with 401 when the code is %s', async (_, change) => {
    const code = await insertInvite(app, cast.room.id, cast.owner);
    await dbOf(app).updateTable('room_invites').set(change).where('code', '=', code).execute();
    expect((await tariffOf(cast.room.id, asGuest(code))).status).toBe(401);
    expect((await eventOf(cast.room.id, asGuest(code))).status).toBe(401);
  });

  it('is refused with 401 by the operations that admit users only', async () => {
    const code = await insertInvite(app, cast.room.id, cast.owner);
    for (const [method, path] of [
      ['GET', `/v1/rooms/${cast.room.id}`],
      ['GET', '/v1/rooms'],
      ['GET', `/v1/rooms/${cast.room.id}/sip`],
    ] as const) {
      expect((await app.request(method, path, asGuest(code))).status).toBe(401);
    }
  });
});

/** Another room, of another owner, used by an event. */
async function otherOwnersRoom() {
  const other = await app.login('other-owner');
  const room = await createRoom(app, other);
  await createEventFor(app, room.id, other);
  return room;
}
