/**
 * Who may see a room (docs/architecture.md §5): its creator owns it; an invitee of the room's event (any invite
 * status: a declined invitee may still look the meeting up) may read it and start it, unless a
 * moderator banned it from the room (room-bans.repository.ts). Everyone else gets 404, as if the room did not
 * exist, so that no stranger learns of it.
 *
 * Every room-scoped operation (rooms, invites, SIP, streaming targets, assets, start) asks here
 * first; write operations then require `access.kind === 'owner'`.
 */
import type { Db, EventInviteRole, RoomRow } from '../../db/schema.js';
import { errors } from '../../errors.js';
import { findRoomWithInviteRole } from './rooms.repository.js';

export type RoomAccess = { kind: 'owner'; room: RoomRow } | { kind: 'invitee'; room: RoomRow; role: EventInviteRole };

/** The caller's access to a room, or undefined when the room does not exist or is not theirs to see. */
async function findRoomAccess(db: Db, userId: string, roomId: string): Promise<RoomAccess | undefined> {
  const row = await findRoomWithInviteRole(db, userId, roomId);
  if (!row) return undefined;
  const { invite_role, ...room } = row;
  if (room.created_by === userId) return { kind: 'owner', room };
  if (invite_role) return { kind: 'invitee', room, role: invite_role };
  return undefined;
}

/** The caller's access to a room; 404 `not_found` when there is none. */
export async function requireRoomAccess(db: Db, userId: string, roomId: string): Promise<RoomAccess> {
  const access = await findRoomAccess(db, userId, roomId);
  if (!access) throw errors.notFound();
  return access;
}

/** The room, when the caller owns it; 404 otherwise (an invitee learns nothing more from a write). */
export async function requireRoomOwner(db: Db, userId: string, roomId: string): Promise<RoomRow> {
  const access = await requireRoomAccess(db, userId, roomId);
  if (access.kind !== 'owner') throw errors.notFound();
  return access.room;
}
