/**
 * All SQL of room invite codes. Every function takes the database or a transaction first. "Valid"
 * means active and not expired at `now` (`expiration <= now` is expired, as in the reference).
 */
import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';

import { countAndPage } from '../../db/paging.js';
import type { DB, RoomInviteRow } from '../../db/schema.js';
import type { PageRequest } from '../paging.js';
import { preparedQuery, sharingInFlight } from '../../db/prepared.js';

type Db = Kysely<DB> | Transaction<DB>;

/** Newest first; the code breaks ties so that pages neither repeat nor skip a row. */
export async function listRoomInvites(db: Db, roomId: string, request: PageRequest): Promise<{ total: number; rows: RoomInviteRow[] }> {
  const ofRoom = db.selectFrom('room_invites').where('room_id', '=', roomId);
  return countAndPage(ofRoom, ofRoom.selectAll().orderBy('created_at', 'desc').orderBy('code', 'desc'), request);
}

export async function insertRoomInvite(db: Db, values: { roomId: string; userId: string; expiration: Date | null; now: Date }): Promise<RoomInviteRow> {
  return db
    .insertInto('room_invites')
    .values({
      // a guest's credential: drawn here from node's CSPRNG rather than left to the column default
      code: randomUUID(),
      room_id: values.roomId,
      created_by: values.userId,
      created_at: values.now,
      updated_by: values.userId,
      updated_at: values.now,
      expiration: values.expiration,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findRoomInvite(db: Db, roomId: string, code: string): Promise<RoomInviteRow | undefined> {
  return db.selectFrom('room_invites').selectAll().where('code', '=', code).where('room_id', '=', roomId).executeTakeFirst();
}

/** Changes the invite of this room; undefined when the room has no such code. */
export async function updateRoomInvite(
  db: Db,
  roomId: string,
  code: string,
  change: { expiration?: Date | null; active?: boolean; userId: string; now: Date },
): Promise<RoomInviteRow | undefined> {
  return db
    .updateTable('room_invites')
    .set({
      ...(change.expiration !== undefined ? { expiration: change.expiration } : {}),
      ...(change.active !== undefined ? { active: change.active } : {}),
      updated_by: change.userId,
      updated_at: change.now,
    })
    .where('code', '=', code)
    .where('room_id', '=', roomId)
    .returningAll()
    .executeTakeFirst();
}

/**
 * An active invite with its expiry and its room's password (null: none). Prepared, and shared in
 * flight: every guest's ticket start reads it, a join storm's guests all with the same code. The
 * expiry is judged by each caller against its own clock, so that the read depends on the code alone.
 */
const activeInviteQuery = sharingInFlight(
  preparedQuery(['code'], (db, { code }: { code: string }) =>
    db
      .selectFrom('room_invites')
      .innerJoin('rooms', 'rooms.id', 'room_invites.room_id')
      .select(['room_invites.code', 'room_invites.room_id', 'room_invites.expiration', 'rooms.password as room_password'])
      .where('room_invites.code', '=', code)
      .where('room_invites.active', '=', true),
  ),
  ({ code }) => code,
);

/** An active invite unexpired at `now`, with its room's password (null: none). */
export async function findValidInvite(db: Db, code: string, now: Date): Promise<{ code: string; room_id: string; room_password: string | null } | undefined> {
  const invite = await activeInviteQuery.takeFirst(db, { code });
  return invite && (invite.expiration === null || invite.expiration > now) ? invite : undefined;
}

/** Invite codes expired at `now` (`expiration <= now`), oldest expiry first. */
export async function listExpiredInvites(db: Db, now: Date): Promise<RoomInviteRow[]> {
  return db.selectFrom('room_invites').selectAll().where('expiration', '<=', now).orderBy('expiration').orderBy('code').execute();
}

/** Deletes these invite codes if they are still expired at `now` (one extended meanwhile stays); answers how many went. */
export async function deleteExpiredInvites(db: Db, codes: readonly string[], now: Date): Promise<number> {
  if (codes.length === 0) return 0;
  const result = await db.deleteFrom('room_invites').where('code', 'in', codes).where('expiration', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
