/**
 * Fixtures of the streaming-target and asset tests (test/integration/streaming, test/integration/assets):
 * the cast of an access matrix around one room, written straight into the database so that these
 * tests depend on neither the rooms nor the events operations.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../src/db/schema.js';
import type { TestApp, TestUser } from './test-app.js';

export const dbOf = (app: TestApp): Kysely<DB> => app.convene.database.db;

export const NOT_A_UUID = 'not-a-uuid';
export const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

/** A room created by `owner`. */
export async function insertRoom(app: TestApp, owner: TestUser): Promise<string> {
  const row = await dbOf(app).insertInto('rooms').values({ created_by: owner.id }).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/** A time-independent event of the room's owner using the room, with `invitee` invited to it. */
export async function inviteThroughEvent(app: TestApp, roomId: string, owner: TestUser, invitee: TestUser): Promise<void> {
  const event = await dbOf(app)
    .insertInto('events')
    .values({ room_id: roomId, created_by: owner.id, updated_by: owner.id, title: 'Review', is_time_independent: true })
    .returning('id')
    .executeTakeFirstOrThrow();
  await dbOf(app).insertInto('event_invites').values({ event_id: event.id, invitee: invitee.id, created_by: owner.id }).execute();
}

export interface Cast {
  owner: TestUser;
  invitee: TestUser;
  stranger: TestUser;
  roomId: string;
  /** Another room of the owner: things of `roomId` must not be reachable through it. */
  otherRoomId: string;
}

/** `owner`'s room, used by an event `invitee` is invited to; `stranger` is logged in and unrelated. */
export async function cast(app: TestApp): Promise<Cast> {
  const [owner, invitee, stranger] = await Promise.all([app.login('owner'), app.login('invitee'), app.login('stranger')]);
  const roomId = await insertRoom(app, owner);
  const otherRoomId = await insertRoom(app, owner);
  await inviteThroughEvent(app, roomId, owner, invitee);
  return { owner, invitee, stranger, roomId, otherRoomId };
}

/** Headers of a request by `user` (none: anonymous), with a JSON content type when there is a body. */
export function headersOf(user: TestUser | undefined, contentType?: string): Record<string, string> {
  return {
    ...(user ? { authorization: `Bearer ${user.accessToken}` } : {}),
    ...(contentType ? { 'content-type': contentType } : {}),
  };
}
