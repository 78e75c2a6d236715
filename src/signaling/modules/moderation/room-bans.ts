/**
 * The moderation module's own SQL. A ban of a registered user writes `room_bans`, which every
 * access rule reads (src/domain/rooms/room-bans.ts): the user is a stranger to the room from then
 * on. A guest has no identity to ban: its ban deactivates the invite code it came in with, as the
 * owner's `DELETE /rooms/{room_id}/invites/{invite_code}` does, so that no start with the code
 * succeeds again (its own, another guest's, a resumption).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/schema.js';

/** Bans the user from the room (again: nothing changes); `bannedBy` is a registered user, the room's owner for a guest moderator. */
export async function banFromRoom(db: Kysely<DB>, roomId: string, userId: string, bannedBy: string): Promise<void> {
  await db
    .insertInto('room_bans')
    .values({ room_id: roomId, user_id: userId, created_by: bannedBy })
    .onConflict((conflict) => conflict.columns(['room_id', 'user_id']).doNothing())
    .execute();
}

/** Deactivates the room's invite code (one already inactive stays as it was); `revokedBy` as for `banFromRoom`. */
export async function revokeInviteCode(db: Kysely<DB>, roomId: string, code: string, revokedBy: string, now: Date): Promise<void> {
  await db
    .updateTable('room_invites')
    .set({ active: false, updated_by: revokedBy, updated_at: now })
    .where('room_id', '=', roomId)
    .where('code', '=', code)
    .where('active', '=', true)
    .execute();
}
