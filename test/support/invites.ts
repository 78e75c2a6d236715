/**
 * Fixtures of the invite-code and TURN tests (test/integration/invites, test/integration/turn):
 * rooms, events and event invites written straight into the database (so these tests do not depend
 * on the rooms or events operations), raw JSON requests, and source addresses of their own for the
 * brute-force limits (the test app trusts `X-Forwarded-For`, so a test's failures never count
 * against another test, another file or an earlier run sharing the same Redis).
 */
import { randomInt } from 'node:crypto';
import { expect } from 'vitest';

import type { components } from '../../generated/openapi.js';
import { dbOf, type TestApp, type TestUser } from './test-app.js';

export type RoomInvite = components['schemas']['RoomInvite'];

export { dbOf };

/** The owner of a room, an invitee of the room's event, and a logged-in stranger. */
export interface Parties {
  owner: TestUser;
  invitee: TestUser;
  stranger: TestUser;
  roomId: string;
}

export async function insertRoom(app: TestApp, owner: TestUser, password: string | null = null): Promise<string> {
  const room = await dbOf(app).insertInto('rooms').values({ created_by: owner.id, password }).returning('id').executeTakeFirstOrThrow();
  return room.id;
}

/** An event of the room's owner using the room, with `invitee` invited (any invite status reads the room). */
export async function inviteToRoomEvent(app: TestApp, roomId: string, owner: TestUser, invitee: TestUser): Promise<void> {
  const event = await dbOf(app)
    .insertInto('events')
    .values({ room_id: roomId, created_by: owner.id, updated_by: owner.id, title: 'Planning', is_time_independent: true })
    .returning('id')
    .executeTakeFirstOrThrow();
  await dbOf(app).insertInto('event_invites').values({ event_id: event.id, invitee: invitee.id, created_by: owner.id }).execute();
}

export async function parties(app: TestApp, options: { password?: string | null } = {}): Promise<Parties> {
  const [owner, invitee, stranger] = [await app.login('owner'), await app.login('invitee'), await app.login('stranger')];
  const roomId = await insertRoom(app, owner, options.password ?? null);
  await inviteToRoomEvent(app, roomId, owner, invitee);
  return { owner, invitee, stranger, roomId };
}

/** An invite code written straight into the database. */
export async function insertInvite(app: TestApp, roomId: string, by: TestUser, fields: { expiration?: Date | null; active?: boolean } = {}): Promise<string> {
  const row = await dbOf(app)
    .insertInto('room_invites')
    .values({ room_id: roomId, created_by: by.id, updated_by: by.id, expiration: fields.expiration ?? null, active: fields.active ?? true })
    .returning('code')
    .executeTakeFirstOrThrow();
  return row.code;
}

/** Headers and body of a raw request: Bearer `token` (or a whole `authorization` value), JSON `body`. */
export function jsonRequest(auth: { token?: string; authorization?: string; ip?: string }, body?: unknown): { headers: Record<string, string>; body?: string } {
  const authorization = auth.authorization ?? (auth.token ? `Bearer ${auth.token}` : undefined);
  return {
    headers: {
      ...(authorization ? { authorization } : {}),
      ...(auth.ip ? { 'x-forwarded-for': auth.ip } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  };
}

/** A documentation-range IPv6 address no other test uses. */
export const freshSourceAddress = (): string => `2001:db8:${[0, 0, 0, 0, 0, 0].map(() => randomInt(0x10000).toString(16)).join(':')}`;

/** The error body's code of a raw answer, checking the status too. */
export function expectError(response: { status: number; text_: string }, status: number, code: string): void {
  expect(response.status, response.text_).toBe(status);
  expect(JSON.parse(response.text_).code).toBe(code);
}
