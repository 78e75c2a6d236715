/** The SQL behind the call-in start (a guest's invite code is looked up by invites.repository, bans by rooms/room-bans). */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

export async function findSipConfigByCallInId(db: Kysely<DB>, callInId: string) {
  return db.selectFrom('sip_configs').select(['room_id', 'password']).where('sip_id', '=', callInId).executeTakeFirst();
}
