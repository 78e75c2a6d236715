/** The SQL behind the start operations (a guest's invite code is looked up by invites.repository). */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

export async function isBannedFromRoom(db: Kysely<DB>, roomId: string, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('room_bans')
    .select('user_id')
    .where('room_id', '=', roomId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row !== undefined;
}

export async function findSipConfigByCallInId(db: Kysely<DB>, callInId: string) {
  return db.selectFrom('sip_configs').select(['room_id', 'password']).where('sip_id', '=', callInId).executeTakeFirst();
}
