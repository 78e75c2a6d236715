/** Rows of `streaming_targets`; every query is scoped to one room, so a target of another room is never found. */
import { sql, type Kysely } from 'kysely';
import { countAndPage } from '../../db/paging.js';
import type { DB, NewStreamingTargetRow, StreamingTargetPatch, StreamingTargetRow } from '../../db/schema.js';
import type { PageRequest } from '../paging.js';

type Db = Kysely<DB>;

/** Oldest first (the order they were added in), with the id breaking ties. */
export async function pageOfRoom(db: Db, roomId: string, request: PageRequest): Promise<{ total: number; rows: StreamingTargetRow[] }> {
  const ofRoom = db.selectFrom('streaming_targets').where('room_id', '=', roomId);
  return countAndPage(ofRoom, ofRoom.selectAll().orderBy('created_at').orderBy('id'), request);
}

export async function findInRoom(db: Db, roomId: string, id: string): Promise<StreamingTargetRow | undefined> {
  return db.selectFrom('streaming_targets').selectAll().where('room_id', '=', roomId).where('id', '=', id).executeTakeFirst();
}

export async function insert(db: Db, row: NewStreamingTargetRow): Promise<StreamingTargetRow> {
  return db.insertInto('streaming_targets').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function updateInRoom(db: Db, roomId: string, id: string, patch: StreamingTargetPatch): Promise<StreamingTargetRow | undefined> {
  return db
    .updateTable('streaming_targets')
    .set({ ...patch, updated_at: sql`now()` })
    .where('room_id', '=', roomId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** True when a row was deleted. */
export async function deleteInRoom(db: Db, roomId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('streaming_targets').where('room_id', '=', roomId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * Replaces the room's targets as a whole (an event's `streaming_targets`); run it in a transaction.
 * They keep the order they were sent in: `now()` is the same for every row of a transaction, so
 * each gets a microsecond more than the one before (targets are listed by `created_at`).
 */
export async function replaceOfRoom(db: Db, roomId: string, rows: Omit<NewStreamingTargetRow, 'room_id' | 'created_at'>[]): Promise<void> {
  await db.deleteFrom('streaming_targets').where('room_id', '=', roomId).execute();
  if (rows.length === 0) return;
  await db
    .insertInto('streaming_targets')
    .values(rows.map((row, i) => ({ ...row, room_id: roomId, created_at: sql<Date>`now() + ${i} * interval '1 microsecond'` })))
    .execute();
}
