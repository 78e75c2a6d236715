/**
 * The room service below HTTP: what the HTTP tests cannot provoke, an asset file that cannot be
 * removed after the room's deletion committed.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import type { DB } from '../../../src/db/schema.js';
import { loadConfig } from '../../../src/config/load.js';
import { createRoomService } from '../../../src/domain/rooms/rooms.service.js';
import { createTariffCatalog } from '../../../src/domain/tariffs/tariff-catalog.js';
import { createTestDatabase, type TestDatabase } from '../../support/database.js';

let testDb: TestDatabase;
let db: Kysely<DB>;
let ownerId: string;
beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.database.db;
});
afterAll(() => testDb?.close());
beforeEach(async () => {
  await testDb.reset();
  const owner = await db
    .insertInto('users')
    .values({ oidc_issuer: 'https://idp.test', oidc_sub: 'owner', email: 'owner@example.test', display_name: 'Owner', tariff_name: null })
    .returning('id')
    .executeTakeFirstOrThrow();
  ownerId = owner.id;
});

const tariffs = createTariffCatalog(loadConfig({ file: false, env: {} }).tariffs);

describe('delete', () => {
  it('deletes the room even when asset files cannot be removed, and names those files', async () => {
    const attempted: string[] = [];
    const rooms = createRoomService({
      db,
      tariffs,
      assetStorage: {
        async delete(key) {
          attempted.push(key);
          if (key.endsWith('1')) throw new Error('disk unavailable');
        },
      },
    });
    const room = await rooms.create(ownerId, { enable_sip: false });
    const keys = ['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002'];
    await db
      .insertInto('assets')
      .values(keys.map((storage_key) => ({ room_id: room.id, filename: 'f', size: 1, storage_key })))
      .execute();

    const result = await rooms.delete(ownerId, room.id);
    expect(result).toEqual({ undeletedAssetKeys: [keys[0]] });
    expect(attempted.sort()).toEqual(keys);
    expect(await db.selectFrom('rooms').select('id').execute()).toEqual([]);
  });
});
