/**
 * The storage layer on whichever backend the environment selects (PGlite in memory, or a fresh
 * PostgreSQL database with DATABASE_URL), plus the embedded on-disk mode and its lock.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { DataDirLockedError, isDatabaseDown, openDatabase, type Database } from '../../src/db/connect.js';
import { migrateToLatest, migrations } from '../../src/db/migrate.js';
import * as eventSpans from '../../src/db/migrations/2026_11_27_0001_event_spans.js';
import * as eventSpanClass from '../../src/db/migrations/2026_11_29_0001_event_span_class.js';
import type { DB } from '../../src/db/schema.js';
import { NO_TIMES } from '../../src/domain/events/event-times.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

let testDb: TestDatabase;
let db: Kysely<DB>;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.database.db;
});
afterAll(() => testDb?.close());
beforeEach(() => testDb.reset());

let users = 0;
async function insertUser(into: Kysely<DB> = db, name = `user${++users}`) {
  return into
    .insertInto('users')
    .values({ oidc_issuer: 'https://idp.test', oidc_sub: name, email: `${name}@example.test`, display_name: name })
    .returningAll()
    .executeTakeFirstOrThrow();
}

async function insertRoom(createdBy: string) {
  return db.insertInto('rooms').values({ created_by: createdBy }).returningAll().executeTakeFirstOrThrow();
}

async function insertEvent(createdBy: string) {
  const room = await insertRoom(createdBy);
  const event = await db
    .insertInto('events')
    .values({
      room_id: room.id,
      created_by: createdBy,
      updated_by: createdBy,
      title: 'Weekly',
      is_time_independent: false,
      is_all_day: false,
      starts_at: new Date('2026-03-26T09:00:00Z'),
      starts_at_tz: 'Europe/Berlin',
      ends_at: new Date('2026-03-26T10:00:00Z'),
      ends_at_tz: 'Europe/Berlin',
      duration_secs: 3600,
      recurrence_pattern: ['RRULE:FREQ=WEEKLY;COUNT=4'],
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { room, event };
}

/** The error a promise rejects with. */
async function failure(promise: Promise<unknown>): Promise<{ code?: string; constraint?: string }> {
  try {
    await promise;
  } catch (err) {
    return err as { code?: string; constraint?: string };
  }
  throw new Error('expected the statement to fail');
}

const count = async (table: keyof DB) =>
  (
    await db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
  ).n;

describe(`storage (${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('has applied every migration, and a second run applies none', async () => {
    const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db);
    expect(applied.rows.map((row) => row.name)).toEqual(Object.keys(migrations));
    expect(await migrateToLatest(db)).toEqual([]);
  });

  it('lists every migration file', () => {
    const dir = fileURLToPath(new URL('../../src/db/migrations/', import.meta.url));
    const files = readdirSync(dir).map((file) => file.replace(/\.ts$/, ''));
    expect(Object.keys(migrations)).toEqual(files.sort());
  });

  it('keeps a write from outside an open transaction out of it (nothing lost on rollback)', async () => {
    let outside: Promise<unknown> | undefined;
    await expect(
      db.transaction().execute(async (trx) => {
        await insertUser(trx, 'inside');
        // not awaited: on PGlite it must wait for the transaction; on pg it runs on another connection
        outside = insertUser(db, 'outside');
        await new Promise((resolve) => setTimeout(resolve, 50));
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await outside;
    const names = await db.selectFrom('users').select('oidc_sub').execute();
    expect(names).toEqual([{ oidc_sub: 'outside' }]);
  });

  it('commits a transaction as a whole', async () => {
    await db.transaction().execute(async (trx) => {
      const user = await insertUser(trx);
      await trx.insertInto('rooms').values({ created_by: user.id }).execute();
    });
    expect([await count('users'), await count('rooms')]).toEqual([1, 1]);
  });

  it('reports unique, foreign key and check violations with code and constraint', async () => {
    const user = await insertUser();
    expect(await failure(insertUser(db, user.oidc_sub))).toMatchObject({ code: '23505', constraint: 'users_oidc_subject_key' });

    expect(await failure(insertRoom('00000000-0000-4000-8000-000000000000'))).toMatchObject({
      code: '23503',
      constraint: 'rooms_created_by_fkey',
    });

    const room = await insertRoom(user.id);
    await db.insertInto('sip_configs').values({ room_id: room.id, sip_id: '0123456789', password: '9876543210' }).execute();
    const other = await insertRoom(user.id);
    expect(await failure(db.insertInto('sip_configs').values({ room_id: other.id, sip_id: '0123456789', password: '1111111111' }).execute())).toMatchObject({
      code: '23505',
      constraint: 'sip_configs_sip_id_key',
    });
    expect(await failure(db.insertInto('sip_configs').values({ room_id: other.id, sip_id: '12345', password: '1111111111' }).execute())).toMatchObject({
      code: '23514',
      constraint: 'sip_configs_sip_id_check',
    });
  });

  it('deletes everything a room carries with the room, its event included', async () => {
    const owner = await insertUser();
    const guest = await insertUser();
    const { room, event } = await insertEvent(owner.id);
    await db.insertInto('sip_configs').values({ room_id: room.id, sip_id: '5550000001', password: '0000000001' }).execute();
    const invite = await db
      .insertInto('room_invites')
      .values({ room_id: room.id, created_by: owner.id, updated_by: owner.id })
      .returningAll()
      .executeTakeFirstOrThrow();
    await db
      .insertInto('streaming_targets')
      .values({ room_id: room.id, name: 'Live', streaming_endpoint: 'rtmp://s.example/live', streaming_key: 'k', public_url: 'https://s.example' })
      .execute();
    await db.insertInto('assets').values({ room_id: room.id, filename: 'a.pdf', size: 3, storage_key: 'assets/a' }).execute();
    await db.insertInto('room_bans').values({ room_id: room.id, user_id: guest.id, created_by: owner.id }).execute();
    await db.insertInto('event_invites').values({ event_id: event.id, invitee: guest.id, created_by: owner.id }).execute();
    await db
      .insertInto('event_email_invites')
      .values({ event_id: event.id, email: 'ext@example.test', room_invite_code: invite.code, created_by: owner.id })
      .execute();
    await db
      .insertInto('event_exceptions')
      .values({ event_id: event.id, instance_start: new Date('2026-04-02T09:00:00Z'), status: 'cancelled', created_by: owner.id })
      .execute();
    await db.insertInto('event_favorites').values({ user_id: guest.id, event_id: event.id }).execute();

    const carried = [
      'sip_configs',
      'room_invites',
      'streaming_targets',
      'assets',
      'room_bans',
      'events',
      'event_invites',
      'event_email_invites',
      'event_exceptions',
      'event_favorites',
    ] as const;
    const counts = async () => Promise.all(carried.map((table) => count(table)));
    expect(await counts()).toEqual(carried.map(() => 1));

    await db.deleteFrom('rooms').where('id', '=', room.id).execute();
    expect(await counts()).toEqual(carried.map(() => 0));
    expect(await count('users')).toBe(2);
  });

  it('deletes an event together with its room', async () => {
    const owner = await insertUser();
    const { room, event } = await insertEvent(owner.id);
    await db.insertInto('sip_configs').values({ room_id: room.id, sip_id: '5550000002', password: '0000000002' }).execute();
    const kept = await insertRoom(owner.id);

    const deleted = await db.deleteFrom('events').where('id', '=', event.id).executeTakeFirst();
    expect(deleted.numDeletedRows).toBe(1n);
    expect(await db.selectFrom('rooms').select('id').execute()).toEqual([{ id: kept.id }]);
    expect(await count('sip_configs')).toBe(0);
  });

  it('refuses a timed event without its times, and a time-independent one with them', async () => {
    const owner = await insertUser();
    const room = await insertRoom(owner.id);
    const base = { room_id: room.id, created_by: owner.id, updated_by: owner.id, title: 't' };
    expect(
      await failure(
        db
          .insertInto('events')
          .values({ ...base, is_time_independent: false })
          .execute(),
      ),
    ).toMatchObject({
      code: '23514',
      constraint: 'events_times_check',
    });
    expect(
      await failure(
        db
          .insertInto('events')
          .values({ ...base, is_time_independent: true, recurrence_pattern: ['RRULE:FREQ=DAILY'] })
          .execute(),
      ),
    ).toMatchObject({ code: '23514', constraint: 'events_times_check' });
    await db
      .insertInto('events')
      .values({ ...base, is_time_independent: true })
      .execute();
  });

  it("backfills each event's span from its rule and its moved occurrences (migration event_spans)", async () => {
    const user = await insertUser();
    // weekly Mar 26 … Apr 16 09:00–10:00 UTC: its first occurrence moved a week earlier, its last a week later (start only)
    const { event: weekly } = await insertEvent(user.id);
    await db
      .updateTable('events')
      .set({ range_end: new Date('2026-04-16T10:00:00Z') })
      .where('id', '=', weekly.id)
      .execute();
    const moved = (instance: string, times: { starts_at?: Date; ends_at?: Date }) =>
      db
        .insertInto('event_exceptions')
        .values({
          event_id: weekly.id,
          instance_start: new Date(instance),
          created_by: user.id,
          ...(times.starts_at ? { starts_at: times.starts_at, starts_at_tz: 'UTC' } : {}),
          ...(times.ends_at ? { ends_at: times.ends_at, ends_at_tz: 'UTC' } : {}),
        })
        .execute();
    await moved('2026-03-26T09:00:00Z', { starts_at: new Date('2026-03-19T09:00:00Z'), ends_at: new Date('2026-03-19T10:00:00Z') });
    await moved('2026-04-16T09:00:00Z', { starts_at: new Date('2026-04-23T09:00:00Z') });
    // a cancellation without times of its own moves nothing
    await db
      .insertInto('event_exceptions')
      .values({ event_id: weekly.id, instance_start: new Date('2026-04-02T09:00:00Z'), status: 'cancelled', created_by: user.id })
      .execute();
    // unbounded: its end stays open
    const { event: open } = await insertEvent(user.id);
    await db
      .updateTable('events')
      .set({ recurrence_pattern: ['RRULE:FREQ=WEEKLY'] })
      .where('id', '=', open.id)
      .execute();

    // the later migration's column is generated from the spans: off and on again around them
    await eventSpanClass.down(db);
    await eventSpans.down(db);
    await eventSpans.up(db);
    await eventSpanClass.up(db);
    const spans = await db.selectFrom('events').select(['id', 'span_start', 'span_end']).orderBy('span_end').execute();
    expect(spans).toEqual([
      { id: weekly.id, span_start: new Date('2026-03-19T09:00:00Z'), span_end: new Date('2026-04-23T10:00:00Z') },
      { id: open.id, span_start: new Date('2026-03-26T09:00:00Z'), span_end: null },
    ]);
  });

  it('sorts events by how far their span reaches from their start (migration event_span_class)', async () => {
    const user = await insertUser();
    const spanned = async (span: { span_start: Date | null; span_end: Date | null }, timeIndependent = false) => {
      const { event } = await insertEvent(user.id);
      const times = timeIndependent ? { is_time_independent: true, ...NO_TIMES } : {};
      await db
        .updateTable('events')
        .set({ ...times, ...span })
        .where('id', '=', event.id)
        .execute();
      return event.id;
    };
    const start = new Date('2026-03-26T09:00:00Z').getTime();
    const at = (hours: number) => new Date(start + hours * 3_600_000);
    const expected = new Map([
      [await spanned({ span_start: at(0), span_end: at(1) }), 0],
      [await spanned({ span_start: at(-48), span_end: at(48) }), 0],
      [await spanned({ span_start: at(0), span_end: at(49) }), 1],
      [await spanned({ span_start: at(-49), span_end: at(1) }), 1],
      [await spanned({ span_start: at(0), span_end: at(9600) }), 1],
      [await spanned({ span_start: at(0), span_end: at(9601) }), 2],
      [await spanned({ span_start: at(-9601), span_end: at(1) }), 2],
      [await spanned({ span_start: at(0), span_end: null }), 2],
      [await spanned({ span_start: null, span_end: null }, true), null],
    ]);
    const rows = await db.selectFrom('events').select(['id', 'span_class']).where('created_by', '=', user.id).execute();
    expect(new Map(rows.map((row) => [row.id, row.span_class]))).toEqual(expected);
  });

  it('round-trips timestamptz as the same instant, whatever the input offset', async () => {
    const owner = await insertUser();
    const { event } = await insertEvent(owner.id);
    const instant = new Date('2026-03-29T00:30:00.123Z');
    const updated = await db
      .updateTable('events')
      .set({ starts_at: instant, ends_at: '2026-03-29T03:30:00.5+02:00', range_end: null })
      .where('id', '=', event.id)
      .returning(['starts_at', 'ends_at', 'range_end', 'created_at'])
      .executeTakeFirstOrThrow();
    expect(updated.starts_at).toBeInstanceOf(Date);
    expect(updated.starts_at!.toISOString()).toBe('2026-03-29T00:30:00.123Z');
    expect(updated.ends_at!.toISOString()).toBe('2026-03-29T01:30:00.500Z');
    expect(updated.range_end).toBeNull();
    expect(Math.abs(updated.created_at.getTime() - Date.now())).toBeLessThan(60_000);

    const found = await db.selectFrom('events').select('id').where('starts_at', '=', new Date('2026-03-29T02:30:00.123+02:00')).execute();
    expect(found).toEqual([{ id: event.id }]);
  });

  it('reads int8 and count(*) as numbers, and dates and intervals as text, on both drivers', async () => {
    const owner = await insertUser();
    const room = await insertRoom(owner.id);
    await db.insertInto('assets').values({ room_id: room.id, filename: 'big.bin', size: 5_000_000_000, storage_key: 'k1' }).execute();
    const { size } = await db.selectFrom('assets').select('size').executeTakeFirstOrThrow();
    expect(size).toBe(5_000_000_000);
    expect(await count('assets')).toBe(1);

    const outbox = await db
      .insertInto('email_outbox')
      .values([
        { kind: 'event_invite', recipients: ['a@example.test'], subject: 's', text: 't' },
        { kind: 'event_invite', recipients: ['b@example.test', 'c@example.test'], subject: 's', text: 't' },
      ])
      .returning(['id', 'recipients', 'attempts'])
      .execute();
    expect(outbox).toEqual([
      { id: 1, recipients: ['a@example.test'], attempts: 0 },
      { id: 2, recipients: ['b@example.test', 'c@example.test'], attempts: 0 },
    ]);

    const { rows } = await sql<{ sum: unknown; huge: unknown; day: unknown; span: unknown }>`
      select sum(size)::int8 as sum, 9007199254740993::int8 as huge, date '2026-03-29' as day, interval '1 day 2 hours' as span
      from assets`.execute(db);
    // beyond 2^53 a number would silently change the value; it stays text
    expect(rows[0]).toEqual({ sum: 5_000_000_000, huge: '9007199254740993', day: '2026-03-29', span: '1 day 02:00:00' });
  });

  it('round-trips text arrays', async () => {
    const owner = await insertUser();
    const { event } = await insertEvent(owner.id);
    const pattern = ['RRULE:FREQ=WEEKLY;BYDAY=MO,WE', 'EXDATE;TZID=Europe/Berlin:20260330T100000', 'RDATE:20260401T080000Z,"quoted"'];
    await db.updateTable('events').set({ recurrence_pattern: pattern }).where('id', '=', event.id).execute();
    const row = await db.selectFrom('events').select('recurrence_pattern').where('id', '=', event.id).executeTakeFirstOrThrow();
    expect(row.recurrence_pattern).toEqual(pattern);
  });

  it('empties every table on reset and restarts identities', async () => {
    await insertUser();
    await db
      .insertInto('email_outbox')
      .values({ kind: 'k', recipients: ['x@example.test'], subject: 's', text: 't' })
      .execute();
    await testDb.reset();
    expect([await count('users'), await count('email_outbox')]).toEqual([0, 0]);
    const { id } = await db
      .insertInto('email_outbox')
      .values({ kind: 'k', recipients: ['x@example.test'], subject: 's', text: 't' })
      .returning('id')
      .executeTakeFirstOrThrow();
    expect(id).toBe(1);
  });

  it('recognises an unreachable database, and not a failing query, as the database being down', async () => {
    const unreachable = await openDatabase({
      url: 'postgres://postgres@127.0.0.1:1/none',
      data_dir: '',
      in_memory: false,
      max_connections: 1,
      query_timeout_ms: 15_000,
    });
    try {
      const refused = await failure(sql`select 1`.execute(unreachable.db));
      expect(isDatabaseDown(refused)).toBe(true);
    } finally {
      await unreachable.close();
    }
    const user = await insertUser();
    expect(isDatabaseDown(await failure(insertUser(db, user.oidc_sub)))).toBe(false);
    expect(isDatabaseDown(new Error('boom'))).toBe(false);
  });

  it.runIf(process.env.DATABASE_URL)('survives the server dropping an idle pooled connection', async () => {
    const url = new URL(process.env.DATABASE_URL!);
    const { rows } = await sql<{ db: string }>`select current_database() as db`.execute(db);
    url.pathname = `/${rows[0]!.db}`;
    const idleErrors: Error[] = [];
    const second = await openDatabase(
      { url: url.toString(), data_dir: '', in_memory: false, max_connections: 1, query_timeout_ms: 15_000 },
      { onIdleError: (err) => idleErrors.push(err) },
    );
    try {
      const { rows: pid } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(second.db);
      await sql`select pg_terminate_backend(${pid[0]!.pid})`.execute(db);
      await expect.poll(() => idleErrors.length).toBe(1);
      expect(isDatabaseDown(idleErrors[0])).toBe(true);
      expect(idleErrors[0], 'the error without the connection pg-pool hangs on it').not.toHaveProperty('client');
      const { rows: again } = await sql<{ one: number }>`select 1 as one`.execute(second.db);
      expect(again).toEqual([{ one: 1 }]);
    } finally {
      await second.close();
    }
  });
});

describe('embedded PGlite on disk', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'convene-data-'));
  const lockFile = join(dataDir, '.lock');
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  const open = () => openDatabase({ data_dir: dataDir, in_memory: false, max_connections: 1, query_timeout_ms: 15_000 });

  it('refuses a data directory that a live process holds', async () => {
    writeFileSync(lockFile, `${process.ppid}\n`);
    await expect(open()).rejects.toThrow(new DataDirLockedError(dataDir, `process ${process.ppid}`));
    expect(readFileSync(lockFile, 'utf8')).toBe(`${process.ppid}\n`);
  });

  it('takes over a stale lock, refuses a second open, persists data, and releases the lock on close', async () => {
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    writeFileSync(lockFile, `${gone}\n`);

    let database: Database | undefined = await open();
    try {
      expect(database.dialect).toBe('pglite');
      expect(readFileSync(lockFile, 'utf8')).toBe(`${process.pid}\n`);
      await expect(open()).rejects.toThrow(DataDirLockedError);

      await migrateToLatest(database.db);
      await insertUser(database.db, 'persisted');
      await database.close();
      expect(existsSync(lockFile)).toBe(false);
      expect(isDatabaseDown(await failure(sql`select 1`.execute(database.db)))).toBe(true);

      database = await open();
      const rows = await database.db.selectFrom('users').select('oidc_sub').execute();
      expect(rows).toEqual([{ oidc_sub: 'persisted' }]);
    } finally {
      await database?.close();
    }
    expect(existsSync(lockFile)).toBe(false);
  }, 60_000);
});
