/**
 * Embedded PGlite in its own thread (src/db/pglite-thread.ts): a long query leaves the server's
 * event loop free; a thread that cannot start says why; a thread that crashes is the database down
 * (every query after it fails as with a server gone, and readiness says so), and closing ends it.
 * Embedded only: these are the embedded database's own properties, whichever backend the suite uses.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate } from 'node:timers/promises';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { isDatabaseDown, openPGlite, pgliteDatabase, type Database } from '../../src/db/connect.js';
import { startPGliteThread } from '../../src/db/pglite-thread.js';
import { createHealthService } from '../../src/domain/health/health.service.js';
import { embeddedTemplate } from '../support/database.js';

/** The error a promise rejects with. */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected it to fail');
}

/**
 * A startup packet of a protocol version PostgreSQL does not speak: its FATAL error ends PGlite's
 * one PostgreSQL process, as any fatal failure of the engine would.
 */
function unsupportedStartupPacket(): Buffer {
  const packet = Buffer.alloc(8);
  packet.writeInt32BE(8, 0);
  packet.writeInt32BE(0x00090009, 4);
  return packet;
}

describe('embedded PGlite in its own thread', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'convene-pglite-thread-'));
  let database: Database;
  beforeAll(async () => {
    database = await openPGlite({ loadDataDir: await embeddedTemplate() });
  });
  afterAll(async () => {
    await database?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('runs a long query while the event loop goes on', async () => {
    let settled = false;
    const sleeping = sql`select pg_sleep(1)`.execute(database.db).finally(() => {
      settled = true;
    });
    // in the server's thread the query would block it, and end, before the loop's next turn
    await setImmediate();
    expect(settled).toBe(false);
    await sleeping;
    const { rows } = await sql<{ one: number }>`select 1 as one`.execute(database.db);
    expect(rows).toEqual([{ one: 1 }]);
  });

  it('gives each connection a session of its own: nothing of the one before (statements, transaction, temporary tables)', async () => {
    const thread = await startPGliteThread({ loadDataDir: await embeddedTemplate() });
    const connect = async () => {
      const client = new pg.Client({ stream: () => thread.connect(), user: 'postgres', database: 'postgres' });
      await client.connect();
      return client;
    };
    try {
      const first = await connect();
      await first.query({ name: 'hot_query', text: 'select 1 as one' });
      await first.query('begin');
      await first.query('create table left_behind (id int)');
      await first.query('create temporary table scratch (id int)');
      await first.end();

      const second = await connect();
      const { rows } = await second.query({ name: 'hot_query', text: 'select 2 as two' });
      expect(rows).toEqual([{ two: 2 }]);
      const left = await second.query("select to_regclass('left_behind') as kept, to_regclass('scratch') as temporary");
      expect(left.rows).toEqual([{ kept: null, temporary: null }]);
      await second.end();
    } finally {
      await thread.close();
    }
  });

  it('refuses to start on a data directory it cannot make, saying why', async () => {
    const file = join(scratch, 'a-file');
    writeFileSync(file, '');
    await expect(startPGliteThread({ dataDir: join(file, 'pglite') })).rejects.toThrow(/^the embedded database \(PGlite\) did not start: ENOTDIR/);
  });

  it('counts a crashed thread as the database down: queries fail as with a server gone, and readiness says so', async () => {
    const failures: Error[] = [];
    const thread = await startPGliteThread({ loadDataDir: await embeddedTemplate() }, (err) => failures.push(err));
    const crashing = pgliteDatabase(thread);
    try {
      const health = createHealthService({ pingDatabase: () => crashing.ping(), mediaStatus: () => 'not_configured' });
      expect(await health.readiness()).toEqual({ failed: [], redis: 'not_configured', media: 'not_configured' });

      const socket = thread.connect();
      const reset = new Promise<unknown>((resolve) => socket.once('error', resolve));
      socket.connect().write(unsupportedStartupPacket());
      expect(isDatabaseDown(await reset)).toBe(true);
      expect(failures).toHaveLength(1);

      expect(isDatabaseDown(await failure(sql`select 1`.execute(crashing.db)))).toBe(true);
      expect(await health.readiness()).toEqual({
        failed: [{ field: 'database', code: 'unavailable', message: 'the database failed' }],
        redis: 'not_configured',
        media: 'not_configured',
      });
      expect(await health.databaseUp()).toBe(false);
    } finally {
      await crashing.close();
    }
    expect(failures).toHaveLength(1);
  });
});
