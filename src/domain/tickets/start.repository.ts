/** The SQL behind the start operations. */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

/** Invite codes are UUIDs; anything else cannot match, and PostgreSQL would reject it as a uuid. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The room's password when `code` is an active invite of that room, unexpired at `now`. */
export async function findValidRoomInvite(
  db: Kysely<DB>,
  roomId: string,
  code: string,
  now: Date,
): Promise<{ password: string | null } | undefined> {
  if (!UUID.test(code)) return undefined;
  return db
    .selectFrom('room_invites')
    .innerJoin('rooms', 'rooms.id', 'room_invites.room_id')
    .select('rooms.password')
    .where('room_invites.code', '=', code)
    .where('room_invites.room_id', '=', roomId)
    .where('room_invites.active', '=', true)
    .where((eb) => eb.or([eb('room_invites.expiration', 'is', null), eb('room_invites.expiration', '>', now)]))
    .executeTakeFirst();
}

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
