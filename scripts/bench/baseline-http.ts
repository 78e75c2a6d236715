// The HTTP baseline of the benchmarks: a bare `node:http` server that answers `GET /rooms/<id>` with
// the same JSON as Convene's `GET /v1/rooms/{room_id}`, from the same single query (the room with
// the caller's invite role, room-access.ts) through `pg`, and nothing else: no framework, no
// authentication (the caller is fixed at start), no validation, no logging. What Convene costs on
// top of the database is the gap between the two.
//
// On PostgreSQL it uses a pool as large as Convene's (`[database] max_connections`, 10); on the
// embedded default there is no server to reach through `pg`, so it runs the same query with
// PGlite's own `query()` over the data directory Convene used (after Convene has stopped: PGlite is
// one process's). With `--named` the query is a named prepared statement, as Convene sends its hot
// queries (src/db/prepared.ts): through `pg`, to the server or to PGlite's node-postgres adapter.
// That is the bare limit once the database no longer parses and plans the query every time.
// Forked by http.bench.ts: `baseline-http.ts <data dir> <caller's user id> [--named]` with
// DATABASE_URL set for PostgreSQL; answers `{type: 'ready', url}` over IPC, stops on `{type: 'close'}`,
// profiles on `{type: 'profile', name}` with BENCH_CPU_PROF (profiler.ts).
import { createServer } from 'node:http';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import pg from 'pg';
import type { RoomRow } from '../../src/db/schema.js';
import { toRoom } from '../../src/domain/rooms/room-view.js';
import { startProfile, stopProfile } from './profiler.js';
import { serveBenchmark } from './server-process.js';

/** The query Kysely builds for `findRoomAccess` (src/domain/rooms/room-access.ts), as it sends it. */
const ROOM_ACCESS = `select "rooms"."id", "rooms"."created_by", "rooms"."created_at", "rooms"."password", "rooms"."waiting_room", (select "event_invites"."role" from "events" inner join "event_invites" on "event_invites"."event_id" = "events"."id" where "events"."room_id" = "rooms"."id" and "event_invites"."invitee" = $1 limit $2) as "invite_role" from "rooms" where "rooms"."id" = $3`;
const POOL_SIZE = 10;

if (!process.send) throw new Error('forked by http.bench.ts (with an IPC channel)');
const send = process.send.bind(process);
const [dataDir, userId, mode] = process.argv.slice(2) as [string, string, string | undefined];
const named = mode === '--named';

type Query = (text: string, values: unknown[]) => Promise<(RoomRow & { invite_role: string | null })[]>;
let query: Query;
let closeDatabase: () => Promise<void>;
if (process.env.DATABASE_URL || named) {
  const pglite = process.env.DATABASE_URL ? undefined : await PGlite.create({ dataDir: join(dataDir, 'pglite') });
  const pool = new pg.Pool(
    pglite ? { ...createPgConfig(pglite), max: 1, idleTimeoutMillis: 0 } : { connectionString: process.env.DATABASE_URL, max: POOL_SIZE },
  );
  query = async (text, values) => (await pool.query(named ? { name: 'room_access', text, values } : { text, values })).rows;
  closeDatabase = async () => {
    await pool.end();
    await pglite?.close();
  };
} else {
  const pglite = await PGlite.create({ dataDir: join(dataDir, 'pglite') });
  query = async (text, values) => (await pglite.query<RoomRow & { invite_role: string | null }>(text, values)).rows;
  closeDatabase = () => pglite.close();
}

const server = createServer((req, res) => {
  const match = /^\/rooms\/([0-9a-f-]{36})$/.exec(req.url ?? '');
  if (req.method !== 'GET' || !match) {
    res.writeHead(404).end();
    return;
  }
  query(ROOM_ACCESS, [userId, 1, match[1]]).then(
    ([row]) => {
      if (!row || (row.created_by !== userId && !row.invite_role)) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"code":"not_found"}');
        return;
      }
      const { invite_role: _role, ...room } = row;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(toRoom(room)));
    },
    (err: unknown) => {
      console.error(err);
      res.writeHead(500).end();
    },
  );
});
server.keepAliveTimeout = 65_000; // as Convene's
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('the baseline server has no address');
  send({ type: 'ready', url: `http://127.0.0.1:${address.port}` });
});

serveBenchmark<{ type: string; name?: string }>(
  async () => {
    await stopProfile();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await closeDatabase();
  },
  (message) => {
    if (message.type === 'profile') void startProfile(message.name ?? 'baseline');
  },
);
