/**
 * A migrated database of its own for a test file.
 *
 * - With `DATABASE_URL`: a fresh database `convene_test_<random>` on that server, migrated, and
 *   dropped on close, so test files running in parallel never see each other's rows.
 * - Otherwise: PGlite in memory, in a thread of its own as the server runs it. A cold PGlite start
 *   with initdb takes 3–5 s (gotcha 20), loading a dumped data directory under 1 s. So the migrated template is built once and dumped; later
 *   databases of the process load that dump. The dump is also kept on disk, keyed by the migration
 *   sources (every file under src/db/migrations/ and src/db/migrate.ts, which lists those that run)
 *   and the PGlite and Kysely versions, so the next test file (a new process) skips the cold start
 *   too.
 *
 * `reset()` empties every table (not the migration bookkeeping) and restarts identities; use it
 * between tests.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kysely, sql } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';

import { createPGlite, openDatabase, openPGlite, type Database } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';

export interface TestDatabase {
  database: Database;
  /** Empties every table and restarts identity sequences. */
  reset(): Promise<void>;
  /** Closes the database (and drops it on a server). */
  close(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const url = process.env.DATABASE_URL;
  const { database, drop } = url ? await freshServerDatabase(url) : { database: await embeddedDatabase(), drop: undefined };
  let tables: string[] | undefined;
  return {
    database,
    async reset() {
      tables ??= await userTables(database);
      if (tables.length === 0) return;
      const truncate = sql`truncate table ${sql.join(tables.map((table) => sql.table(table)))} restart identity cascade`;
      // the app's background workers (webhook deliveries, mail) lock rows meanwhile; PostgreSQL
      // breaks a lock cycle by failing one side (40P01), and the reset is the side to try again
      for (let attempt = 1; ; attempt++) {
        try {
          await truncate.execute(database.db);
          return;
        } catch (err) {
          if ((err as { code?: string }).code !== '40P01' || attempt === 5) throw err;
        }
      }
    },
    async close() {
      await database.close();
      await drop?.();
    },
  };
}

async function userTables(database: Database): Promise<string[]> {
  const { rows } = await sql<{ tablename: string }>`
    select tablename from pg_tables
    where schemaname = current_schema() and tablename not like 'kysely\\_%'
    order by tablename`.execute(database.db);
  return rows.map((row) => row.tablename);
}

/** A new, empty database named `<prefix>_<random>` on the server of `url`, and a way to drop it. */
export async function emptyServerDatabase(url: string, prefix: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await onServer(url, `create database ${name}`);
  const target = new URL(url);
  target.pathname = `/${name}`;
  return { url: target.toString(), drop: () => onServer(url, `drop database if exists ${name} with (force)`) };
}

async function freshServerDatabase(url: string): Promise<{ database: Database; drop: () => Promise<void> }> {
  const target = await emptyServerDatabase(url, 'convene_test');
  const { drop } = target;
  const database = await openDatabase({ url: target.url, data_dir: '', in_memory: false, max_connections: 10, query_timeout_ms: 15_000 });
  try {
    await migrateToLatest(database.db);
  } catch (err) {
    await database.close();
    await drop();
    throw err;
  }
  return { database, drop };
}

async function onServer(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** The dumped, migrated template of this process (see the header). */
let template: Promise<Blob> | undefined;

/** PGlite in its thread (as the server runs it), loaded from the template. */
async function embeddedDatabase(): Promise<Database> {
  return openPGlite({ loadDataDir: await embeddedTemplate() });
}

/** The migrated template's dump, to start PGlite from (`loadDataDir`). */
export function embeddedTemplate(): Promise<Blob> {
  template ??= buildTemplate();
  return template;
}

async function buildTemplate(): Promise<Blob> {
  const cacheFile = templateCacheFile();
  const cached = readCache(cacheFile);
  if (cached) return cached;

  const pglite = await createPGlite();
  try {
    await migrateToLatest(new Kysely({ dialect: new PGliteDialect(pglite) }));
    const dump = await pglite.dumpDataDir('none');
    await writeCache(cacheFile, dump);
    return dump;
  } finally {
    await pglite.close();
  }
}

/** Where the template of the checkout at `root` is kept: a name that changes with whatever decides its schema. */
export function templateCacheFile(root = fileURLToPath(new URL('../../', import.meta.url))): string {
  const hash = createHash('sha256');
  for (const pkg of ['@electric-sql/pglite', 'kysely']) {
    hash.update(readFileSync(join(root, 'node_modules', pkg, 'package.json')));
  }
  for (const file of SCHEMA_SOURCES.flatMap((source) => filesOf(join(root, source)))) {
    hash.update(relative(root, file)).update(readFileSync(file));
  }
  return join(root, 'node_modules/.cache/convene', `pglite-template-${hash.digest('hex').slice(0, 16)}.tar`);
}

/**
 * What decides the template's schema: the migrations, and migrate.ts, which lists those that run
 * (a migration file it does not list yet changes nothing, and listing it later must change the key).
 */
const SCHEMA_SOURCES = ['src/db/migrate.ts', 'src/db/migrations'];

/** The file itself, or every file under the directory, in a fixed order. */
function filesOf(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

function readCache(file: string): Blob | undefined {
  try {
    return new Blob([readFileSync(file)]);
  } catch {
    return undefined;
  }
}

/** Written to a temporary name and renamed, so that a parallel reader never sees half a file. */
async function writeCache(file: string, dump: Blob): Promise<void> {
  try {
    mkdirSync(join(file, '..'), { recursive: true });
    const partial = `${file}.${process.pid}.partial`;
    writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
    renameSync(partial, file);
  } catch {
    // a cache we cannot write only costs the next test file the cold start
  }
}
