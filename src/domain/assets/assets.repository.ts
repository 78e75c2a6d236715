/** Rows of `assets` (metadata; the bytes are in the AssetStorage). Queries are scoped to one room. */
import { sql, type Kysely } from 'kysely';
import type { AssetRow, DB, NewAssetRow } from '../../db/schema.js';

type Db = Kysely<DB>;

export async function countOfRoom(db: Db, roomId: string): Promise<number> {
  const { count } = await db
    .selectFrom('assets')
    .where('room_id', '=', roomId)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(count);
}

/** Newest first (contract), the id breaking ties so that pages never overlap. */
export async function pageOfRoom(db: Db, roomId: string, { limit, offset }: { limit: number; offset: number }): Promise<AssetRow[]> {
  return db
    .selectFrom('assets')
    .selectAll()
    .where('room_id', '=', roomId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
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

/** Holds the room against deletion until the transaction ends; false when it is already gone. */
export async function shareLockRoom(trx: Db, roomId: string): Promise<boolean> {
  const row = await trx.selectFrom('rooms').select('id').where('id', '=', roomId).forShare().executeTakeFirst();
  return row !== undefined;
}

/** Bytes of all assets in the rooms `ownerId` created: what the tariff's `max_storage` limits. */
export async function usedStorageOfOwner(db: Db, ownerId: string): Promise<number> {
  const { used } = await db
    .selectFrom('assets')
    .innerJoin('rooms', 'rooms.id', 'assets.room_id')
    .where('rooms.created_by', '=', ownerId)
    .select(sql<number>`coalesce(sum(assets.size), 0)::bigint`.as('used'))
    .executeTakeFirstOrThrow();
  return Number(used);
}

export async function insert(db: Db, row: NewAssetRow): Promise<AssetRow> {
  return db.insertInto('assets').values(row).returningAll().executeTakeFirstOrThrow();
}
