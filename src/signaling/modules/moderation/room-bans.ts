/**
 * The moderation module's own SQL: a ban writes `room_bans`, which the start operations read
 * (src/domain/tickets/start.repository.ts): a banned user's start of the room answers 404.
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
