/**
 * Fixtures of the rooms and SIP integration tests (test/integration/rooms): rooms created through
 * the API, and what other areas own written straight into the database (an event using a room, an
 * event invite that makes a user an invitee), so that these tests do not depend on the events
 * operations. Room invite codes come from `insertInvite` (./invites.ts).
 */
import { expect } from 'vitest';
import type { components } from '../../generated/openapi.js';
import { dbOf, type TestApp, type TestUser } from './test-app.js';

export type Room = components['schemas']['Room'];
export type SipConfig = components['schemas']['SipConfig'];

export { dbOf };

export const json = (token: string | undefined, body?: unknown) => ({
  headers: {
    ...(token ? { authorization: `Bearer ${token}` } : {}),
    ...(body === undefined ? {} : { 'content-type': 'application/json' }),
  },
  body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
});

/** A room owned by `owner`, created through `POST /rooms`. */
export async function createRoom(app: TestApp, owner: TestUser, body: { password?: string; enable_sip?: boolean; waiting_room?: boolean } = {}): Promise<Room> {
  const { data, response } = await app.api(owner.accessToken).POST('/rooms', { body: { enable_sip: false, waiting_room: false, ...body } });
  expect(response.status).toBe(201);
  return data!;
}

/** A time-independent event of `creator` that uses the room. */
export async function createEventFor(app: TestApp, roomId: string, creator: TestUser, fields: { title?: string; is_adhoc?: boolean } = {}): Promise<string> {
  const row = await dbOf(app)
    .insertInto('events')
    .values({
      room_id: roomId,
      created_by: creator.id,
      updated_by: creator.id,
      title: fields.title ?? 'Weekly planning',
      is_adhoc: fields.is_adhoc ?? false,
      is_time_independent: true,
      is_all_day: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Makes `invitee` an invitee of the event (and so a reader of its room). */
export async function inviteToEvent(app: TestApp, eventId: string, invitee: TestUser, by: TestUser): Promise<void> {
  await dbOf(app).insertInto('event_invites').values({ event_id: eventId, invitee: invitee.id, created_by: by.id }).execute();
}

export interface RoomWithParties {
  owner: TestUser;
  invitee: TestUser;
  stranger: TestUser;
  room: Room;
  eventId: string;
}

/**
 * The cast of an access matrix: `owner`'s room used by an event that `invitee` is invited to, and
 * `stranger`, a logged-in user with no relation to it.
 */
export async function roomWithParties(app: TestApp, roomBody: Parameters<typeof createRoom>[2] = {}): Promise<RoomWithParties> {
  const [owner, invitee, stranger] = await Promise.all([app.login('owner'), app.login('invitee'), app.login('stranger')]);
  const room = await createRoom(app, owner, roomBody);
  const eventId = await createEventFor(app, room.id, owner);
  await inviteToEvent(app, eventId, invitee, owner);
  return { owner, invitee, stranger, room, eventId };
}

export const NOT_A_UUID = 'not-a-uuid';
export const UNKNOWN_ROOM = '00000000-0000-4000-8000-000000000000';
