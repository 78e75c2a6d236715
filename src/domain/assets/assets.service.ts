/**
 * Room assets (the contract): files stored with a room. The room's owner
 * uploads and deletes; the owner and the invitees of the room's event list and download; everyone
 * else gets 404. Uploads count against the `max_storage` quota (bytes) of the owner's tariff,
 * summed over all the owner's rooms.
 *
 * The bytes go to the AssetStorage before the row is inserted, and are removed again when the
 * insert is refused, so a row never points at bytes that are not there.
 */
import type { Readable } from 'node:stream';
import type { components } from '../../../generated/openapi.js';
import type { AssetRow, Db } from '../../db/schema.js';
import { errors } from '../../errors.js';
import { requireRoomAccess, requireRoomOwner } from '../rooms/room-access.js';
import type { TariffCatalog } from '../tariffs/tariff-catalog.js';
import type { Page, PageRequest } from '../paging.js';
import { newStorageKey, type AssetStorage } from './asset-storage.js';
import * as repository from './assets.repository.js';

export type Asset = components['schemas']['Asset'];
export type UserAsset = components['schemas']['UserAsset'];

/** What the upload's query says about the file. */
export interface UploadInfo {
  filename: string;
  namespace: string;
}

export interface AssetDownload {
  asset: Asset;
  bytes: Readable;
}

export interface AssetService {
  list(userId: string, roomId: string, page: PageRequest): Promise<Page<Asset>>;
  /** The assets of the rooms the user created, across them all (the settings page's storage view). */
  listOwned(userId: string, page: PageRequest): Promise<Page<UserAsset>>;
  upload(userId: string, roomId: string, info: UploadInfo, bytes: Uint8Array): Promise<Asset>;
  download(userId: string, roomId: string, assetId: string): Promise<AssetDownload>;
  delete(userId: string, roomId: string, assetId: string): Promise<void>;
}

export interface AssetServiceDeps {
  db: Db;
  storage: AssetStorage;
  tariffs: TariffCatalog;
}

/** Uploaded files (as opposed to ones a signaling module produces) are of this kind. */
const UPLOAD_KIND = 'upload';

export function createAssetService({ db, storage, tariffs }: AssetServiceDeps): AssetService {
  /** The quota check; `trx` must hold the owner's row lock for the answer to stay true until the insert. */
  async function checkQuota(trx: Db, owner: { id: string; tariff_name: string | null }, size: number) {
    const quota = tariffs.forUser(owner).quotas.max_storage;
    if (quota === undefined) return; // a tariff without the quota does not limit storage
    const used = await repository.usedStorageOfOwner(trx, owner.id);
    if (used + size > quota) throw errors.storageExceeded(quota);
  }

  return {
    async list(userId, roomId, page) {
      await requireRoomAccess(db, userId, roomId);
      const { total, rows } = await repository.pageOfRoom(db, roomId, page);
      return { total, items: rows.map(present) };
    },

    async listOwned(userId, page) {
      const { total, rows } = await repository.pageOfOwner(db, userId, page);
      return {
        total,
        items: rows.map((row) => ({ ...present(row), room_id: row.room_id, ...(row.event_id ? { event_id: row.event_id } : {}) })),
      };
    },

    async upload(userId, roomId, info, bytes) {
      const room = await requireRoomOwner(db, userId, roomId);
      const ownerId = room.created_by;
      // an upload that cannot fit is refused before its bytes are written (re-checked under the lock below)
      await checkQuota(db, { id: ownerId, tariff_name: await repository.findTariffNameOf(db, ownerId) }, bytes.byteLength);

      const key = newStorageKey();
      await storage.put(key, bytes);
      try {
        const row = await db.transaction().execute(async (trx) => {
          const owner = await repository.lockOwner(trx, ownerId);
          if (!owner || !(await repository.shareLockRoom(trx, roomId))) throw errors.notFound();
          await checkQuota(trx, { id: ownerId, tariff_name: owner.tariff_name }, bytes.byteLength);
          return repository.insert(trx, {
            room_id: roomId,
            filename: info.filename,
            namespace: info.namespace,
            kind: UPLOAD_KIND,
            size: bytes.byteLength,
            storage_key: key,
          });
        });
        return present(row);
      } catch (err) {
        await storage.delete(key);
        throw err;
      }
    },

    async download(userId, roomId, assetId) {
      await requireRoomAccess(db, userId, roomId);
      const row = await repository.findInRoom(db, roomId, assetId);
      if (!row) throw errors.notFound();
      // gone between the lookup and here: the asset was deleted meanwhile
      const bytes = await storage.get(row.storage_key);
      if (!bytes) throw errors.notFound();
      return { asset: present(row), bytes };
    },

    async delete(userId, roomId, assetId) {
      await requireRoomOwner(db, userId, roomId);
      const key = await repository.deleteInRoom(db, roomId, assetId);
      if (key === undefined) throw errors.notFound();
      // the row goes first: a failure here leaves unreferenced bytes, never a row without them
      await storage.delete(key);
    },
  };
}

function present(row: AssetRow): Asset {
  return {
    id: row.id,
    filename: row.filename,
    // assets produced elsewhere may carry neither; the contract wants strings
    namespace: row.namespace ?? '',
    kind: row.kind ?? '',
    created_at: new Date(row.created_at).toISOString(),
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-conversion -- int8: the parser leaves a string above 2^53 (db/connect.ts)
    size: Number(row.size),
  };
}
