/**
 * A ban (a moderator's `ban`, written to `room_bans` by the moderation module) overrides the banned
 * user's invitation to the room's event: everything the invitation would open (reading the room,
 * its invites, assets, streaming targets and event, listing them, answering the invitation,
 * starting the room) treats the user as a stranger, with the 404 a stranger gets. Every query that
 * grants access through `event_invites` adds `notBannedFrom`. A banned user who presents its access
 * token to an operation open to guests (starting the room or verifying an invite code) is refused
 * with `isBannedFromRoom`; one who comes without it is an anonymous guest, kept out only by
 * revoking the codes it holds (a moderator's `ban` of a guest revokes the code it came in with).
 */
import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { Db } from '../../db/schema.js';

/** SQL: the user (a column or a value) is not banned from the room (a column). */
export function notBannedFrom(roomId: Expression<string>, userId: Expression<string> | string): RawBuilder<SqlBool> {
  return sql<SqlBool>`not exists (select 1 from room_bans where room_bans.room_id = ${roomId} and room_bans.user_id = ${userId})`;
}

export async function isBannedFromRoom(db: Db, roomId: string, userId: string): Promise<boolean> {
  const row = await db.selectFrom('room_bans').select('user_id').where('room_id', '=', roomId).where('user_id', '=', userId).executeTakeFirst();
  return row !== undefined;
}
