/**
 * Opens the database: Kysely over a `pg` pool when a URL is configured, otherwise over embedded
 * PGlite, persisted under `<data_dir>/pglite` (or in memory), in a thread of its own
 * (pglite-thread.ts) and reached through pg as well, over the wire protocol as a server is. One
 * driver for both: the same value types (the parsers below), so code and tests cannot tell them
 * apart, and the hot queries of prepared.ts as named statements.
 *
 * PGlite is one session: its pool has one connection, handed to one query or transaction at a time
 * (toolchain gotcha 19: without that, a write from outside an open transaction ran inside it and
 * was rolled back with it). The flip side: inside `db.transaction().execute(trx => …)` use `trx`
 * only — a query on `db` there waits for the transaction to end, which never comes.
 */
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';

import type { Config } from '../config/schema.js';
import { startPGliteThread, type PGliteThread } from './pglite-thread.js';
import type { PGliteThreadOptions } from './pglite-worker.js';
import { statementNameOf } from './prepared.js';
import type { DB } from './schema.js';
import { parseTimestampTz } from './timestamptz.js';

export interface Database {
  db: Kysely<DB>;
  dialect: 'postgres' | 'pglite';
  /** The pool's connections now (for the metrics): open, idle, and queries waiting for one. */
  poolStats(): { total: number; idle: number; waiting: number };
  /** Queries that failed and connections that could not be opened, since the database was opened. */
  errorCount(): number;
  /** Resolves when the database answers a query (`select 1`), for the health and readiness probes. */
  ping(): Promise<void>;
  /** Ends the pool or closes PGlite (and releases the data directory). Safe to call twice. */
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** Errors of idle pool connections (server restarted, network gone); the next query reconnects. */
  onIdleError?: (err: Error) => void;
  /**
   * The embedded database's thread failed (PGlite crashed): the database stays down, every query
   * fails as with a server gone, until the process restarts.
   */
  onEmbeddedFailure?: (err: Error) => void;
}

const OID = { INT8: 20, DATE: 1082, TIMESTAMPTZ: 1184, INTERVAL: 1186 } as const;

/** int8 (bigint columns, count(*)) as a number when it fits one exactly, else as its decimal text. */
function parseInt8(text: string): number | string {
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : text;
}

/**
 * Where pg and PGlite differ by default: int8 (string vs number), date (local vs UTC midnight,
 * depending on the process TZ) and interval (object vs string). And timestamptz, read as pg reads
 * it but faster (timestamptz.ts).
 */
const typeParsers: Record<number, (text: string) => unknown> = {
  [OID.INT8]: parseInt8,
  [OID.DATE]: (text) => text,
  [OID.TIMESTAMPTZ]: parseTimestampTz,
  [OID.INTERVAL]: (text) => text,
};

export async function openDatabase(cfg: Config['database'], options: OpenDatabaseOptions = {}): Promise<Database> {
  if (cfg.url) return openPostgres(cfg.url, cfg.max_connections, cfg.query_timeout_ms, options);
  if (cfg.in_memory) return openPGlite({}, { onFailure: options.onEmbeddedFailure });

  const lock = lockDataDir(cfg.data_dir);
  try {
    const dataDir = join(cfg.data_dir, 'pglite');
    mkdirSync(dataDir, { recursive: true });
    // Durability: PGlite runs PostgreSQL with fsync off (-F), but a commit still writes its WAL into
    // the data directory (through to the OS) before it answers, so a killed process loses nothing it
    // acknowledged (test/faults/process-kill.test.ts); a power cut may. Keep synchronous_commit on:
    // with it off, that test lost every acknowledged write.
    return await openPGlite({ dataDir }, { onFailure: options.onEmbeddedFailure, onClose: async () => lock.release() });
  } catch (err) {
    lock.release();
    throw err;
  }
}

/** Counts a database's failures (for the metrics), as its pool's connections report them. */
interface ErrorTally {
  count: number;
}

/**
 * The pool's connection class: sends the prepared queries (prepared.ts) as named statements (pg
 * parses each one once per connection and then only binds and executes it; every other query is
 * unnamed), and counts failed queries and failed connection attempts in `tally`. Counting costs a
 * query one `catch` on its promise; the pool's own events report neither failure.
 */
function preparingClient(tally: ErrorTally): typeof pg.Client {
  const counted = () => {
    tally.count++;
  };
  return class PreparingClient extends pg.Client {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- pg.Client.query overloads return a promise or void; any is what overriding them takes
    override query(...args: unknown[]): any {
      const [text, values] = args;
      const name = typeof text === 'string' ? statementNameOf(text) : undefined;
      const pending =
        name === undefined ? (super.query as (...a: unknown[]) => unknown)(...args) : super.query({ name, text: text as string, values: values as unknown[] });
      // the callers here (Kysely, the pool's adapter) all take the promise; a callback query returns none
      if (pending instanceof Promise) pending.catch(counted);
      return pending;
    }

    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as query: pg.Client.connect overloads return a promise or void
    override connect(...args: unknown[]): any {
      type Callback = (err?: Error | null, ...rest: unknown[]) => void;
      const connect = super.connect.bind(this) as (callback?: Callback) => Promise<unknown> | undefined;
      const [callback] = args as [Callback | undefined];
      // the pool connects with a callback: its error arrives there
      if (callback) {
        return connect((err, ...rest) => {
          if (err) counted();
          callback(err, ...rest);
        });
      }
      const connecting = connect();
      connecting?.catch(counted);
      return connecting;
    }
  };
}

/** pg's text parsers with Convene's in place of pg's defaults (above). */
const pgTypes = {
  getTypeParser: ((oid: number, format?: string) =>
    // eslint-disable-next-line @typescript-eslint/no-unsafe-return, @typescript-eslint/no-unsafe-enum-assignment -- pg types its parsers by enum and returns any; the cast below states the contract
    (format ?? 'text') === 'text' && typeParsers[oid] ? typeParsers[oid] : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

function openPostgres(url: string, max: number, queryTimeoutMs: number, options: OpenDatabaseOptions): Database {
  const tally: ErrorTally = { count: 0 };
  const pool = new pg.Pool({
    Client: preparingClient(tally),
    connectionString: url,
    max,
    // a server that does not answer (rather than refusing) fails requests instead of hanging them
    connectionTimeoutMillis: Math.min(10_000, queryTimeoutMs),
    // and a server that stops answering on an open connection (frozen, partitioned) fails its
    // queries after this long (503) instead of holding every request; the connection's later
    // queries wait behind the unanswered one, and fail alike until the server answers again
    query_timeout: queryTimeoutMs,
    types: pgTypes,
  });
  // Without a listener an idle client's error (e.g. the server restarting) would crash the process.
  // pg-pool hangs the failed client on the error (`err.client`), already out of the pool: a logger
  // would write out the whole connection object with it, every line of a server restart.
  pool.on('error', (err: Error & { client?: unknown }) => {
    delete err.client;
    options.onIdleError?.(err);
  });
  // The pool listens to idle clients only. A server gone while a client is checked out (a crash or an
  // immediate shutdown in the middle of a query) fails the query and then emits 'error' on the client,
  // which crashed the process (test/faults/postgres-restart.test.ts). The query's caller reports the
  // failure (503) and the pool drops the client when it is released; this listener only keeps the
  // process alive.
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return { db, dialect: 'postgres', ...observed(pool, tally), ping: () => ping(db), close: once(() => db.destroy()) };
}

/** A PGlite instance in this thread with Convene's type parsers (for its own queries); in memory unless `dataDir` is given. */
export function createPGlite(options: PGliteOptions = {}): Promise<PGlite> {
  return PGlite.create({ ...options, parsers: { ...typeParsers, ...options.parsers } });
}

/** Hooks of an embedded database: `onClose` runs once it is closed; `onFailure` hears of its thread's crash. */
export interface PGliteHooks {
  onClose?: () => Promise<void>;
  onFailure?: ((err: Error) => void) | undefined;
}

/** Embedded PGlite in a thread of its own (pglite-thread.ts): in memory, on `dataDir`, or loaded from a dump (`loadDataDir`). */
export async function openPGlite(options: PGliteThreadOptions = {}, hooks: PGliteHooks = {}): Promise<Database> {
  return pgliteDatabase(await startPGliteThread(options, hooks.onFailure), hooks.onClose);
}

/**
 * The database of a PGlite thread; closing it ends the thread, then runs `onClose`. Kysely
 * reaches it through pg, as it reaches a server: the same parsers, and the prepared queries as
 * named statements, which PGlite's own `query()` cannot send (it parses, describes and plans every
 * query anew: the room-access query cost 290 µs of CPU that way and 100 µs named, measured here).
 * One connection that is never dropped for idleness, as PGlite is one session.
 */
export function pgliteDatabase(thread: PGliteThread, onClose?: () => Promise<void>): Database {
  const tally: ErrorTally = { count: 0 };
  const pool = new pg.Pool({
    // PGlite takes the startup packet's user and database as they are; any password
    stream: () => thread.connect(),
    user: 'postgres',
    database: 'postgres',
    password: 'postgres',
    Client: preparingClient(tally),
    max: 1,
    idleTimeoutMillis: 0,
    types: pgTypes,
  });
  // as on a server: a connection the thread drops (it crashed) fails its query, not the process
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: 'pglite',
    ...observed(pool, tally),
    ping: () => ping(db),
    close: once(async () => {
      try {
        await db.destroy();
        await thread.close();
      } finally {
        await onClose?.();
      }
    }),
  };
}

async function ping(db: Kysely<DB>): Promise<void> {
  await sql`select 1`.execute(db);
}

/** What the metrics read of a database: its pool's figures (for PGlite the one session's) and its failures. */
function observed(pool: pg.Pool, tally: ErrorTally): Pick<Database, 'poolStats' | 'errorCount'> {
  return {
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    errorCount: () => tally.count,
  };
}

/**
 * PGlite has no lock of its own (gotcha 21): two processes on one data directory (`npm start` twice,
 * the server and `npm run migrate`) would both write to it. `<data_dir>/.lock` holds the owner's pid,
 * created with O_EXCL. A lock whose process is gone is stale and taken over; so is one holding our
 * own pid that this process does not hold (a restarted container's pid 1).
 */
const heldLocks = new Set<string>();

export class DataDirLockedError extends Error {
  constructor(dataDir: string, holder: string) {
    super(`the data directory ${dataDir} is in use by ${holder}; stop it, or delete ${join(dataDir, '.lock')} if it is gone`);
    this.name = 'DataDirLockedError';
  }
}

function lockDataDir(dataDir: string): { release(): void } {
  mkdirSync(dataDir, { recursive: true });
  const path = resolve(dataDir, '.lock');
  if (heldLocks.has(path)) throw new DataDirLockedError(dataDir, 'this process');
  for (let attempt = 0; attempt < 2; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = lockHolder(path);
      if (holder !== undefined && holder !== process.pid && isAlive(holder)) {
        throw new DataDirLockedError(dataDir, `process ${holder}`);
      }
      removeFile(path);
      continue;
    }
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    heldLocks.add(path);
    const release = () => {
      process.off('exit', release);
      if (!heldLocks.delete(path)) return;
      if (lockHolder(path) === process.pid) removeFile(path);
    };
    process.on('exit', release);
    return { release };
  }
  throw new DataDirLockedError(dataDir, 'another process that started at the same time');
}

function lockHolder(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8'), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function removeFile(path: string): void {
  try {
    unlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

const once = (fn: () => Promise<void>): (() => Promise<void>) => {
  let closing: Promise<void> | undefined;
  return () => (closing ??= fn());
};

const NETWORK_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** SQLSTATEs of a server that is going away or cannot take us: admin/crash shutdown, starting up, too many connections. */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300']);
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Query read timeout|is not queryable|Cannot use a pool after calling end|PGlite is closed|driver has already been destroyed/i;

/**
 * Whether an error means "the database cannot be reached" (answer 503 and let the client retry)
 * rather than "this query is wrong". Looks through `cause` and AggregateError's `errors` (a refused
 * connection to a host with both IPv4 and IPv6 addresses is one).
 */
export function isDatabaseDown(err: unknown, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > 5) return false;
  const { code, message, cause, errors } = err as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === 'string' && (NETWORK_ERRORS.has(code) || UNAVAILABLE_STATES.has(code) || code.startsWith('08'))) {
    return true;
  }
  if (typeof message === 'string' && UNAVAILABLE_MESSAGES.test(message)) return true;
  if (Array.isArray(errors) && errors.some((inner) => isDatabaseDown(inner, depth + 1))) return true;
  return isDatabaseDown(cause, depth + 1);
}
