/**
 * Fixtures of the streaming-target and asset tests (test/integration/streaming, test/integration/assets):
 * the cast of an access matrix around one room, written straight into the database so that these
 * tests depend on neither the rooms nor the events operations.
 */
import { insertRoom, inviteToRoomEvent } from './invites.js';
import { dbOf, type TestApp, type TestUser } from './test-app.js';

// rooms and event invites as the invite-code tests write them
export { dbOf, insertRoom };

/** A valid streaming target: every field set, as the owner sends and reads it. */
export const TARGET = {
  name: 'Company channel',
  kind: 'custom',
  streaming_endpoint: 'rtmp://live.example.org/app',
  streaming_key: 'k3y-0f-the-stream',
  public_url: 'https://video.example.org/company',
};

export const NOT_A_UUID = 'not-a-uuid';
export const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

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
  await inviteToRoomEvent(app, roomId, owner, invitee);
  return { owner, invitee, stranger, roomId, otherRoomId };
}

/** Headers of a request by `user` (none: anonymous), with a JSON content type when there is a body. */
export function headersOf(user: TestUser | undefined, contentType?: string): Record<string, string> {
  return {
    ...(user ? { authorization: `Bearer ${user.accessToken}` } : {}),
    ...(contentType ? { 'content-type': contentType } : {}),
  };
}
