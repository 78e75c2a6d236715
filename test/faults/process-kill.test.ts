/**
 * SIGKILL during writes loses no acknowledged write (issue 8, faults). Convene runs as a real process
 * (src/main.ts) on data that outlives it: embedded PGlite in a data directory, and, when
 * DATABASE_URL is set, a fresh database of that server. Concurrent clients create rooms, change them
 * and create invite codes, recording every write that was answered 2xx; the process is SIGKILLed
 * mid-stream, with writes in flight, and started again on the same data, which must open, and every
 * acknowledged write must read back exactly as it was answered (a write in flight at the kill may
 * or may not have happened, but only entirely). Three kills in one test; at the end the data is
 * checked for corruption with amcheck (every btree index against its table, every table's heap).
 *
 * The bar is "flushed to the operating system": SIGKILL ends the process, not the machine, so what
 * the process wrote into the OS page cache survives it. PGlite runs PostgreSQL with fsync off (it
 * starts it with -F), which a power cut could cost; its commits still write the WAL before they
 * answer, which is what this test holds it to.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PGlite } from '@electric-sql/pglite';
import { amcheck } from '@electric-sql/pglite/contrib/amcheck';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, childEnv, freshServerDatabase, killChildren, loginTo, startChild, type ChildServer } from '../support/child-server.js';
import { startTestIssuer, type TestIssuer } from '../support/oidc-issuer.js';

const databaseUrl = process.env.DATABASE_URL || undefined;
const KILLS = 3;
/** Clients writing at once. */
const WRITERS = 12;
/** Acknowledged writes in a round before the kill may come (then a random moment within 100 ms). */
const ACKS_BEFORE_KILL = 100;
/**
 * A hang guard, not a speed target (the time is printed, never asserted: on a loaded 2-core machine
 * the kills and restarts once took 103 s, beyond the 90 s this test used to assert).
 */
const HANG_GUARD_MS = 300_000;

let issuer: TestIssuer;
const dirs: string[] = [];
const drops: Array<() => Promise<void>> = [];
beforeAll(async () => {
  issuer = await startTestIssuer({ clientId: 'convene' });
});
afterAll(async () => {
  await killChildren();
  await Promise.all(drops.map((drop) => drop()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  await issuer?.close();
});

/** A room as the service answered it, and what a write in flight at a kill may have made of it. */
interface RoomRecord {
  id: string;
  acknowledged: Record<string, unknown>;
  /** The state a PATCH sent but not answered would have left: either this or `acknowledged` is right. */
  unanswered?: Record<string, unknown>;
  invites: Record<string, unknown>[];
}

interface Round {
  acknowledged: number;
  inFlightAtKill: number;
}

/**
 * Writers create a room, change it and give it an invite code, over and over, until the child is
 * SIGKILLed (after ACKS_BEFORE_KILL acknowledged writes and a random moment more). Every answered
 * write is recorded in `rooms`; an answer other than the expected 2xx fails the test.
 */
async function writeUntilKilled(child: ChildServer, token: string, rooms: Map<string, RoomRecord>, round: number): Promise<Round> {
  let acknowledged = 0;
  let inFlight = 0;
  let killed = false;
  let enough!: () => void;
  const enoughAcknowledged = new Promise<void>((resolve) => (enough = resolve));

  /** The answer's body, or undefined when no answer came (the child died; the write may or may not have happened). */
  async function write(method: string, path: string, body: unknown, expected: number): Promise<any> {
    inFlight++;
    let answer;
    try {
      answer = await call(child, method, path, { token, body });
    } catch (err) {
      if (killed) return undefined;
      throw err;
    } finally {
      inFlight--;
    }
    if (answer.status !== expected) throw new Error(`${method} ${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    if (++acknowledged >= ACKS_BEFORE_KILL) enough();
    return answer.body;
  }

  async function writer(w: number): Promise<void> {
    for (let i = 0; ; i++) {
      const tag = `${round}-${w}-${i}`;
      const room = await write('POST', '/v1/rooms', { password: `pw-${tag}`, enable_sip: false, waiting_room: false }, 201);
      if (!room) return;
      const record: RoomRecord = { id: room.id, acknowledged: room, invites: [] };
      rooms.set(room.id, record);
      const change = { password: `changed-${tag}`, waiting_room: true };
      record.unanswered = { ...room, ...change };
      const changed = await write('PATCH', `/v1/rooms/${room.id}`, change, 200);
      if (!changed) return;
      expect(changed).toEqual(record.unanswered);
      record.acknowledged = changed;
      delete record.unanswered;
      const invite = await write('POST', `/v1/rooms/${room.id}/invites`, { expiration: '2099-01-01T00:00:00Z' }, 200);
      if (!invite) return;
      record.invites.push(invite);
    }
  }

  const writers = Array.from({ length: WRITERS }, (_, w) => writer(w));
  // a writer that fails before the kill must not leave the test waiting for acknowledgements
  const failed = Promise.race(writers).then(() => {
    if (!killed) throw new Error(`a writer stopped before the kill:\n${child.output()}`);
  });
  await Promise.race([enoughAcknowledged, failed]);
  await sleep(Math.random() * 100);
  const inFlightAtKill = inFlight;
  killed = true;
  child.kill('SIGKILL');
  expect(await child.exited).toEqual({ code: null, signal: 'SIGKILL' });
  await Promise.all(writers);
  return { acknowledged, inFlightAtKill };
}

/** Every recorded room and invite code reads back as acknowledged; answers how many were compared. */
async function verify(child: ChildServer, token: string, rooms: Map<string, RoomRecord>): Promise<{ rooms: number; invites: number }> {
  const records = [...rooms.values()];
  let invites = 0;
  const check = async (record: RoomRecord) => {
    const room = await call(child, 'GET', `/v1/rooms/${record.id}`, { token });
    expect(room.status, JSON.stringify(room.body)).toBe(200);
    expect(record.unanswered ? [record.acknowledged, record.unanswered] : [record.acknowledged]).toContainEqual(room.body);
    // what a write in flight left is the state from now on
    record.acknowledged = room.body;
    delete record.unanswered;
    for (const invite of record.invites) {
      const stored = await call(child, 'GET', `/v1/rooms/${record.id}/invites/${String(invite.invite_code)}`, { token });
      expect(stored.status).toBe(200);
      expect(stored.body).toEqual([invite]);
      invites++;
    }
  };
  // a few at a time, as the writers did
  for (let next = 0; next < records.length; next += WRITERS) await Promise.all(records.slice(next, next + WRITERS).map(check));
  return { rooms: records.length, invites };
}

/** amcheck's verdict on every table and btree index of the schema: the problems found (none when intact). */
async function corruption(query: (text: string) => Promise<Array<Record<string, unknown>>>): Promise<string[]> {
  await query('create extension if not exists amcheck');
  const relations = await query(`
    select c.oid::int as oid, c.relname as name, c.relkind as kind, a.amname as am
    from pg_class c join pg_namespace n on n.oid = c.relnamespace left join pg_am a on a.oid = c.relam
    where n.nspname = current_schema() and c.relkind in ('r', 'i')`);
  const problems: string[] = [];
  for (const { oid, name, kind, am } of relations) {
    if (kind === 'r') {
      for (const row of await query(`select * from verify_heapam(${Number(oid)})`)) problems.push(`${String(name)}: ${JSON.stringify(row)}`);
    } else if (am === 'btree') {
      try {
        await query(`select bt_index_check(${Number(oid)}, true)`);
      } catch (err) {
        problems.push(`${String(name)}: ${(err as Error).message}`);
      }
    }
  }
  expect(relations.length).toBeGreaterThan(10); // the schema's tables and indexes were there to check
  return problems;
}

const modes = [{ name: 'embedded PGlite in a data directory', onServer: false }, ...(databaseUrl ? [{ name: 'PostgreSQL', onServer: true }] : [])];

describe.each(modes)('SIGKILL during writes on $name', ({ name, onServer }) => {
  it(`keeps every acknowledged write through ${KILLS} kills, and the data opens intact`, { timeout: HANG_GUARD_MS }, async () => {
    const began = Date.now();
    const cwd = mkdtempSync(join(tmpdir(), 'convene-kill-'));
    dirs.push(cwd);
    const server = onServer ? await freshServerDatabase(databaseUrl!) : undefined;
    if (server) drops.push(server.drop);
    const env = childEnv(cwd, issuer, server ? { DATABASE_URL: server.url } : {});

    const starts: number[] = [];
    const start = async () => {
      const at = Date.now();
      const started = await startChild(cwd, env);
      starts.push(Date.now() - at);
      return started;
    };
    let child = await start();
    const token = await loginTo(child, issuer, 'kim');
    const rooms = new Map<string, RoomRecord>();
    const rounds: Array<Round & { verified: { rooms: number; invites: number } }> = [];
    const killsBegan = Date.now();
    for (let round = 1; round <= KILLS; round++) {
      const written = await writeUntilKilled(child, token, rooms, round);
      expect(written.inFlightAtKill).toBeGreaterThan(0); // killed mid-stream
      child = await start(); // the data must open after the kill
      rounds.push({ ...written, verified: await verify(child, token, rooms) });
    }
    const killsTook = Date.now() - killsBegan;
    child.kill('SIGTERM');
    expect(await child.exited, child.output()).toEqual({ code: 0, signal: null });

    let problems: string[];
    if (server) {
      const client = new pg.Client({ connectionString: server.url });
      await client.connect();
      try {
        problems = await corruption(async (text) => (await client.query(text)).rows);
      } finally {
        await client.end();
      }
    } else {
      const pglite = await PGlite.create({ dataDir: join(cwd, 'data', 'pglite'), extensions: { amcheck } });
      try {
        problems = await corruption(async (text) => (await pglite.query<Record<string, unknown>>(text)).rows);
      } finally {
        await pglite.close();
      }
    }
    expect(problems).toEqual([]);

    const acknowledged = rounds.reduce((sum, r) => sum + r.acknowledged, 0);
    const last = rounds[rounds.length - 1]!.verified;
    console.log(
      `process-kill on ${name}: ${KILLS} kills, ${acknowledged} writes acknowledged ` +
        `(per round ${rounds.map((r) => r.acknowledged).join('/')}, in flight at each kill ${rounds.map((r) => r.inFlightAtKill).join('/')}), ` +
        `verified after each restart ${rounds.map((r) => `${r.verified.rooms} rooms + ${r.verified.invites} invite codes`).join(', ')}; ` +
        `kills and restarts in ${(killsTook / 1000).toFixed(1)} s, ${((Date.now() - began) / 1000).toFixed(1)} s in all ` +
        `(starts ${starts.map((ms) => (ms / 1000).toFixed(1)).join('/')} s)`,
    );
    expect(last.rooms + last.invites).toBeGreaterThanOrEqual((KILLS * ACKS_BEFORE_KILL) / 3);
  });
});
