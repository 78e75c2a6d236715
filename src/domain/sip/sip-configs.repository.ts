/**
 * A room's SIP dial-in configuration: the call-in id (`sip_id`, 10 random digits, unique across
 * rooms) and pin (`password`, 10 digits, generated when not given), as the reference does (§8).
 * Rooms created with `enable_sip` and every event's room get one.
 */
import { randomInt } from 'node:crypto';
import type { Db, SipConfigRow } from '../../db/schema.js';

const DIGITS = 10;
/** A collision needs two equal draws out of 10^10; a few retries make a failure astronomically rare. */
const MAX_ATTEMPTS = 5;

/** `count` decimal digits from the CSPRNG (leading zeros allowed). */
function randomDigits(count = DIGITS): string {
  let digits = '';
  for (let i = 0; i < count; i++) digits += String(randomInt(10));
  return digits;
}

/**
 * Inserts the room's SIP config with a fresh unique call-in id. `ON CONFLICT (sip_id) DO NOTHING`
 * keeps a surrounding transaction alive on a collision (a unique violation would abort it), so the
 * retry can run inside the caller's transaction.
 */
export async function createSipConfig(db: Db, roomId: string, options: { password?: string; lobby?: boolean } = {}): Promise<SipConfigRow> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const row = await db
      .insertInto('sip_configs')
      .values({ room_id: roomId, sip_id: randomDigits(), password: options.password ?? randomDigits(), lobby: options.lobby ?? false })
      .onConflict((oc) => oc.column('sip_id').doNothing())
      .returningAll()
      .executeTakeFirst();
    if (row) return row;
  }
  throw new Error(`no free call-in id after ${MAX_ATTEMPTS} attempts`);
}

/** Locks the room's row until the transaction ends (concurrent PUTs of one room queue here); false when it is gone. */
export async function lockRoom(trx: Db, roomId: string): Promise<boolean> {
  const room = await trx.selectFrom('rooms').select('id').where('id', '=', roomId).forUpdate().executeTakeFirst();
  return room !== undefined;
}

export async function findSipConfig(db: Db, roomId: string): Promise<SipConfigRow | undefined> {
  return db.selectFrom('sip_configs').selectAll().where('room_id', '=', roomId).executeTakeFirst();
}

/** Changes the given fields of the room's SIP config; the call-in id never changes. */
export async function updateSipConfig(db: Db, roomId: string, changes: { password?: string; lobby?: boolean }): Promise<SipConfigRow | undefined> {
  return db.updateTable('sip_configs').set(changes).where('room_id', '=', roomId).returningAll().executeTakeFirst();
}

/** True when the room had a SIP config; its call-in id and pin stop working at once. */
export async function deleteSipConfig(db: Db, roomId: string): Promise<boolean> {
  const result = await db.deleteFrom('sip_configs').where('room_id', '=', roomId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
