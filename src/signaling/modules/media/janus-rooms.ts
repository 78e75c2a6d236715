/**
 * A Convene room's Janus room: one per room, on one Janus server, pinned in the media store so that
 * every instance puts its handles on the same server. It is created when the room's first stream is
 * published and destroyed when the room empties. A pin to a server that is down is dropped and the
 * room moves to a server that is up: the media on the lost server is gone anyway.
 */
import { randomInt } from 'node:crypto';
import type { MediaParts } from './media-context.js';
import type { JanusRoomAssignment } from './media-store.js';

/** Janus's videoroom error for `create` of a room id that exists (another instance created it first). */
const ROOM_EXISTS = 427;
/** Janus's videoroom error for a room it does not know (its server restarted, or the room was destroyed). */
export const NO_SUCH_ROOM = 426;

/** Room ids are Janus's unsigned 64-bit integers; random ones below 2^53 stay exact in JSON on both sides. */
const randomRoomId = () => randomInt(1, 2 ** 48);

export class MediaUnavailable extends Error {
  constructor() {
    super('no Janus server is up');
  }
}

/** The room's Janus room, pinned to a server that is up and existing there. Throws MediaUnavailable when no server is up. */
export async function janusRoomFor(parts: MediaParts, roomId: string): Promise<JanusRoomAssignment> {
  const { store, servers } = parts;
  let room = await store.janusRoom(roomId);
  if (room && !servers.isUp(room.server)) {
    await store.releaseJanusRoom(roomId, room);
    room = undefined;
  }
  if (!room) {
    const [server] = servers.available();
    if (server === undefined) throw new MediaUnavailable();
    room = await store.assignJanusRoom(roomId, { server, janusRoomId: randomRoomId() });
  }
  // every time: the server may have restarted and forgotten it; a room that exists is fine
  await servers
    .roomRequest(room.server, {
      request: 'create',
      room: room.janusRoomId,
      description: roomId,
      is_private: true,
      publishers: MAX_PUBLISHERS,
      bitrate: parts.config.max_video_bitrate,
      videoorient_ext: false,
      audiolevel_ext: true,
      audiolevel_event: false,
    })
    .catch((err: unknown) => {
      if (errorCode(err) !== ROOM_EXISTS) throw err;
    });
  return room;
}

/** Publishers a Janus room admits: every participant's camera and screen (Janus's default is 3). */
const MAX_PUBLISHERS = 10_000;

/** The room emptied: its Janus room goes (a server that is down lost it already). */
export async function destroyJanusRoom(parts: MediaParts, roomId: string): Promise<void> {
  const room = await parts.store.janusRoom(roomId);
  if (!room) return;
  if (parts.servers.isUp(room.server)) {
    await parts.servers.roomRequest(room.server, { request: 'destroy', room: room.janusRoomId }).catch((err: unknown) => {
      if (errorCode(err) !== NO_SUCH_ROOM) throw err;
    });
  }
  await parts.store.releaseJanusRoom(roomId, room);
}

/** Removes a publisher of a participant that is gone without its instance (a crash) from the Janus room. */
export async function kickPublisher(parts: MediaParts, roomId: string, feedId: number): Promise<void> {
  const room = await parts.store.janusRoom(roomId);
  if (!room || !parts.servers.isUp(room.server)) return;
  await parts.servers.roomRequest(room.server, { request: 'kick', room: room.janusRoomId, id: feedId }).catch(() => undefined);
}

/** The Janus or videoroom error code of a failed request, if it carries one. */
export function errorCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}
