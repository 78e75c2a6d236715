/**
 * Fixtures of the streaming-target and asset tests (test/integration/streaming, test/integration/assets):
 * the cast of an access matrix around one room, written straight into the database so that these
 * tests depend on neither the rooms nor the events operations.
 */
import { insertRoom, parties, type Parties } from './invites.js';
import { dbOf, type TestApp, type TestUser } from './test-app.js';

// rooms and event invites as the invite-code tests write them, ids as the rooms tests name them
export { dbOf, insertRoom };
export { NOT_A_UUID, UNKNOWN_ROOM as UNKNOWN_ID } from './rooms.js';

/** A valid streaming target: every field set, as the owner sends and reads it. */
export const TARGET = {
  name: 'Company channel',
  kind: 'custom',
  streaming_endpoint: 'rtmp://live.example.org/app',
  streaming_key: 'k3y-0f-the-stream',
  public_url: 'https://video.example.org/company',
};

export interface Cast extends Parties {
  /** Another room of the owner: things of `roomId` must not be reachable through it. */
  otherRoomId: string;
}

/** `owner`'s room, used by an event `invitee` is invited to; `stranger` is logged in and unrelated. */
export async function cast(app: TestApp): Promise<Cast> {
  const roomParties = await parties(app);
  return { ...roomParties, otherRoomId: await insertRoom(app, roomParties.owner) };
}

/** Headers of a request by `user` (none: anonymous), with a JSON content type when there is a body. */
export function headersOf(user: TestUser | undefined, contentType?: string): Record<string, string> {
  return {
    ...(user ? { authorization: `Bearer ${user.accessToken}` } : {}),
    ...(contentType ? { 'content-type': contentType } : {}),
  };
}
