// One Convene instance for the signaling benchmark (scripts/bench/signaling.ts), in a process of
// its own: its memory is its own, and two instances run on two event loops as two deployed
// instances would (two instances in one process would share one thread for both fan-outs).
//
// - `primary [--redis]`: the first instance, on a fresh test database (PGlite in memory, or a new
//   database on DATABASE_URL's server, dropped on close) and, with `--redis`, REDIS_URL's Redis.
//   It seeds a room of a logged-in owner with an invite code and tells the benchmark where
//   everything is, including what a second instance needs to join it.
// - `secondary <database url> <issuer>`: another instance over the primary's PostgreSQL database
//   and REDIS_URL's Redis (a PGlite database lives in its process, so a split room needs
//   PostgreSQL). It only serves guests, who need no token of the issuer.
//
// Both answer `memory` with process.memoryUsage() after full garbage collections (and the CPU time so far). Those stop the
// process for seconds once it holds thousands of participants, and so may the joins of a wave into
// such a room: a client's pong then waits unread, so the heartbeat allows two minutes instead of 20 s
// (pings as usual), lest the benchmark's own pauses count as dead clients.
// Started by the benchmark: fork('signaling-server.ts', [...], { execArgv: ['--import', 'tsx', '--expose-gc'] }).
import { sql } from 'kysely';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load.js';
import { createConvene, type Convene } from '../../src/server.js';
import { insertInvite, insertRoom } from '../../test/support/invites.js';
import { dbOf, startTestApp } from '../../test/support/test-app.js';
import { BENCH_LIMITS } from './bench-limits.js';
import { serveBenchmark } from './server-process.js';

/** What the benchmark learns when an instance is up; the room's fields only from the primary. */
export interface ServerReady {
  type: 'ready';
  url: string;
  room?: {
    roomId: string;
    /** The room owner's access token (a moderator in the room), valid for an hour. */
    ownerToken: string;
    /** One invite code for every guest: each start with it is a participant of its own. */
    inviteCode: string;
    /** Where a second instance finds the database and the issuer; no database URL on PGlite. */
    databaseUrl?: string;
    issuer: string;
  };
}
export type ServerRequest = { type: 'memory' } | { type: 'cpu' } | { type: 'close' };
/** The answer to `cpu`: the CPU time so far, without the collections `memory` runs first. */
export interface ServerCpu {
  type: 'cpu';
  cpu: NodeJS.CpuUsage;
}
export interface ServerMemory {
  type: 'memory';
  usage: NodeJS.MemoryUsage;
  /** The process's CPU time so far (user and system, µs), to tell what filling a room cost it. */
  cpu: NodeJS.CpuUsage;
}

if (!process.send || !global.gc) throw new Error('run by scripts/bench/signaling.ts (with an IPC channel and --expose-gc)');
const send = process.send.bind(process);
const gc = global.gc;
const [role, ...args] = process.argv.slice(2);
const redisUrl = process.env.REDIS_URL;
// and its one invite code and one address carry every participant (BENCH_LIMITS; the brute-force guard would also
// answer 429 to a start waiting over 2 s behind the 10 others of its address in flight: the benchmark starts 50 at a
// time, and under load each takes longer)
const heartbeat = {
  signaling: { ping_interval_ms: 15_000, pong_timeout_ms: 120_000 },
  ...BENCH_LIMITS,
};

const { convene, close } = role === 'secondary' ? await secondary(args[0]!, args[1]!) : await primary(args.includes('--redis'));

async function primary(redis: boolean) {
  const app = await startTestApp({ ...heartbeat, ...(redis ? { redis: { url: redisUrl } } : {}) });
  const owner = await app.login('bench-owner');
  const roomId = await insertRoom(app, owner);
  let databaseUrl: string | undefined;
  if (process.env.DATABASE_URL) {
    const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(dbOf(app));
    const url = new URL(process.env.DATABASE_URL);
    url.pathname = `/${rows[0]!.name}`;
    databaseUrl = url.toString();
  }
  // as `convene serve` does right after it listens: the fill measures a running server, not its start
  await app.convene.warmUp();
  const ready: ServerReady = {
    type: 'ready',
    url: app.url,
    room: {
      roomId,
      ownerToken: await app.issuer.accessToken({ sub: `sub-${owner.name}` }, { expiresIn: 3600 }),
      inviteCode: await insertInvite(app, roomId, owner),
      databaseUrl,
      issuer: app.issuer.issuer,
    },
  };
  send(ready);
  return { convene: app.convene, close: () => app.close() };
}

async function secondary(databaseUrl: string, issuer: string): Promise<{ convene: Convene; close: () => Promise<void> }> {
  // as test/support/test-app.ts configures an instance, over the primary's database and issuer
  const config = loadConfig({
    file: false,
    env: {},
    overrides: {
      http: { host: '127.0.0.1', port: 0 },
      database: { url: databaseUrl },
      oidc: { issuer, client_id: 'convene' },
      dev: { identity_provider: false },
      logging: { level: 'silent' },
      redis: { url: redisUrl },
      ...heartbeat,
    },
  });
  const instance = await createConvene(config, { logger: pino({ level: 'silent' }) });
  const { port } = await instance.listen(0, '127.0.0.1');
  await instance.warmUp();
  send({ type: 'ready', url: `http://127.0.0.1:${port}` } satisfies ServerReady);
  return { convene: instance, close: () => instance.close() };
}

/** Live memory: idle HTTP connections (the tickets' requests, not participants) closed, then full collections until finalizers have run. */
async function measure(): Promise<void> {
  convene.server.closeIdleConnections();
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  send({ type: 'memory', usage: process.memoryUsage(), cpu: process.cpuUsage() } satisfies ServerMemory);
}

serveBenchmark<ServerRequest>(close, (request) => {
  if (request.type === 'memory') void measure();
  if (request.type === 'cpu') send({ type: 'cpu', cpu: process.cpuUsage() } satisfies ServerCpu);
});
