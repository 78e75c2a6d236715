/** Rows of `assets` (metadata; the bytes are in the AssetStorage). Queries are scoped to one room. */
import type { Kysely } from 'kysely';
import { countAndPage } from '../../db/paging.js';
import type { AssetRow, DB, NewAssetRow } from '../../db/schema.js';
import type { PageRequest } from '../paging.js';

type Db = Kysely<DB>;

/** Newest first (contract), the id breaking ties so that pages never overlap. */
export async function pageOfRoom(db: Db, roomId: string, request: PageRequest): Promise<{ total: number; rows: AssetRow[] }> {
  const ofRoom = db.selectFrom('assets').where('room_id', '=', roomId);
  return countAndPage(ofRoom, ofRoom.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc'), request);
}

/** An asset of one of the owner's rooms, with the room's event when it has one. */
export interface OwnedAssetRow extends AssetRow {
  event_id: string | null;
}

/**
 * The assets of every room `ownerId` created (what `max_storage` counts), newest first like a room's
 * listing; each with the event of its room, if any (an event has one room, a room at most one event).
 */
export async function pageOfOwner(db: Db, ownerId: string, request: PageRequest): Promise<{ total: number; rows: OwnedAssetRow[] }> {
  const owned = db
    .selectFrom('assets')
    .innerJoin('rooms', 'rooms.id', 'assets.room_id')
    .leftJoin('events', 'events.room_id', 'assets.room_id')
    .where('rooms.created_by', '=', ownerId);
  const ordered = owned.selectAll('assets').select('events.id as event_id').orderBy('assets.created_at', 'desc').orderBy('assets.id', 'desc');
  return countAndPage(owned, ordered, request);
}

export async function findInRoom(db: Db, roomId: string, id: string): Promise<AssetRow | undefined> {
  return db.selectFrom('assets').selectAll().where('room_id', '=', roomId).where('id', '=', id).executeTakeFirst();
}

/** The deleted row's storage key, or undefined when the room has no such asset. */
export async function deleteInRoom(db: Db, roomId: string, id: string): Promise<string | undefined> {
  const row = await db.deleteFrom('assets').where('room_id', '=', roomId).where('id', '=', id).returning('storage_key').executeTakeFirst();
  return row?.storage_key;
}

/**
 * Locks the owner's user row until the transaction ends, so that uploads into any of the owner's
 * rooms check the quota one after another (two concurrent uploads cannot both see the old total).
 * Answers the owner's tariff name, or undefined when the user is gone.
 */
export async function lockOwner(trx: Db, ownerId: string): Promise<{ tariff_name: string | null } | undefined> {
  return trx.selectFrom('users').select('tariff_name').where('id', '=', ownerId).forUpdate().executeTakeFirst();
}

/** The owner's tariff name without a lock (null: the default tariff, or the user is gone). */
export async function findTariffNameOf(db: Db, userId: string): Promise<string | null> {
  const row = await db.selectFrom('users').select('tariff_name').where('id', '=', userId).executeTakeFirst();
  return row?.tariff_name ?? null;
}

/** Holds the room against deletion until the transaction ends; false when it is already gone. */
export async function shareLockRoom(trx: Db, roomId: string): Promise<boolean> {
  const row = await trx.selectFrom('rooms').select('id').where('id', '=', roomId).forShare().executeTakeFirst();
  return row !== undefined;
}

/**
 * Bytes of all assets in the rooms the owner created: what the tariff's `max_storage` limits; the
 * same sum `GET /users/me` shows as `used_storage`, so it is one query.
 */
export { usedStorageOf as usedStorageOfOwner } from '../users/users.repository.js';

export async function insert(db: Db, row: NewAssetRow): Promise<AssetRow> {
  return db.insertInto('assets').values(row).returningAll().executeTakeFirstOrThrow();
}
