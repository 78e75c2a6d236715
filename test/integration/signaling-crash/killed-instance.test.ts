/**
 * Crash cleanup (issue 8): Convene instances as real processes (src/main.ts, test/support/child-server.ts)
 * over one PostgreSQL database and one Redis, with short liveness settings; one of them is
 * SIGKILLed with participants in rooms and in a waiting room, so none of their departures runs.
 * Within the liveness lifetime plus one sweep interval the participants on the surviving
 * instances get `left` (reason `timeout`) for each of the dead instance's participants exactly
 * once, although two instances sweep the room; the moderators get `left_waiting_room`; the timer
 * a dead moderator started stops with `creator_left`; later joiners see only the living and the
 * participant limit counts only them; and a room whose every participant was on the dead instance
 * is fresh for the next one (empty, a new session, chat and settings forgotten, nothing left in
 * Redis once it empties again). An instance frozen (SIGSTOP) past its lifetime is taken for dead
 * likewise; when it thaws, it closes its removed participants' sockets with 1001, and the others
 * hear of no second departure. Needs REDIS_URL and DATABASE_URL (instances in separate processes
 * share a database server, not an embedded one).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DEFAULT_SIGNALING_PROTOCOL } from '../../../packages/client/src/signaling.js';
import { call, childEnv, freshServerDatabase, killChildren, loginTo, startChild, type ChildServer } from '../../support/child-server.js';
import { startTestIssuer, type TestIssuer } from '../../support/oidc-issuer.js';
import { SignalingClient } from '../../support/signaling-client.js';
import { UNCAPPED_TOML } from '../../support/signaling.js';

const redisUrl = process.env.REDIS_URL || undefined;
const databaseUrl = process.env.DATABASE_URL || undefined;
if (!redisUrl || !databaseUrl) console.log('REDIS_URL or DATABASE_URL is not set: the crash cleanup tests need both and are skipped in this run');

const TTL_MS = 1_000;
const SWEEP_MS = 250;
/** From the kill until every survivor has heard: the key's lifetime, a sweep, and time for a loaded machine. */
const BOUND_MS = TTL_MS + SWEEP_MS + 1_500;
/** After the expected frames, how long a duplicate is given to show up (several sweeps of both survivors). */
const GRACE_MS = 6 * SWEEP_MS;
const LIMIT = 4;
const TIME_LIMIT_SECS = 3_600;

/** Every instance's configuration: short liveness, no signaling caps (UNCAPPED says why), and a tariff with a participant limit and a time limit (for `closes_at`). */
const CONFIG = `
[signaling]
instance_ttl_ms = ${TTL_MS}
instance_refresh_ms = ${TTL_MS / 4}
crash_sweep_interval_ms = ${SWEEP_MS}

${UNCAPPED_TOML}
[tariffs]
default = "crash"
[tariffs.definitions.crash]
quotas = { room_participant_limit = ${LIMIT}, room_time_limit_secs = ${TIME_LIMIT_SECS} }
`;

type Who = { token: string } | { inviteCode: string };
type Client = SignalingClient & { id: string; joinSuccess: Record<string, any> };

describe.skipIf(!redisUrl || !databaseUrl)('an instance killed with participants', () => {
  let issuer: TestIssuer;
  let database: { url: string; drop(): Promise<void> };
  const dirs: string[] = [];
  let a: ChildServer;
  let c: ChildServer;
  let owner: string;

  function start(): Promise<ChildServer> {
    const cwd = mkdtempSync(joinPath(tmpdir(), 'convene-crash-'));
    dirs.push(cwd);
    writeFileSync(joinPath(cwd, 'convene.toml'), CONFIG);
    return startChild(cwd, childEnv(cwd, issuer, { DATABASE_URL: database.url, REDIS_URL: redisUrl!, CONVENE_CONFIG: joinPath(cwd, 'convene.toml') }));
  }

  beforeAll(async () => {
    issuer = await startTestIssuer({ clientId: 'convene' });
    database = await freshServerDatabase(databaseUrl!);
    a = await start(); // migrates the database before the others open it
    c = await start();
    owner = await loginTo(a, issuer, 'owner');
  }, 120_000);

  const clients: SignalingClient[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close().catch(() => undefined)));
  });
  afterAll(async () => {
    await killChildren();
    await database?.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    await issuer?.close();
  });

  async function room(options: { waiting_room?: boolean } = {}): Promise<{ roomId: string; guest: Who; moderator: Who }> {
    const created = await call(a, 'POST', '/v1/rooms', { token: owner, body: { enable_sip: false, ...options } });
    expect(created.status).toBe(201);
    const roomId = created.body.id as string;
    const invite = await call(a, 'POST', `/v1/rooms/${roomId}/invites`, { token: owner, body: {} });
    expect(invite.status).toBe(200);
    return { roomId, moderator: { token: owner }, guest: { inviteCode: invite.body.invite_code } };
  }

  /** Starts (as the owner or a guest) on `child`, opens the socket there and sends `join`. */
  async function askToJoin(child: ChildServer, roomId: string, who: Who, name: string): Promise<SignalingClient> {
    const started =
      'token' in who
        ? await call(child, 'POST', `/v1/rooms/${roomId}/start`, { token: who.token, body: {} })
        : await call(child, 'POST', `/v1/rooms/${roomId}/start_invited`, { body: { invite_code: who.inviteCode } });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const client = new SignalingClient(
      new WebSocket(`${child.url.replace(/^http/, 'ws')}/signaling`, [DEFAULT_SIGNALING_PROTOCOL, `ticket#${started.body.ticket}`]),
    );
    clients.push(client);
    await client.connection.opened;
    client.command('control', 'join', { display_name: name });
    return client;
  }

  async function join(child: ChildServer, roomId: string, who: Who, name: string): Promise<Client> {
    const client = await askToJoin(child, roomId, who, name);
    const joinSuccess = (await client.next('control', 'join_success', 5_000)).payload;
    return Object.assign(client, { id: joinSuccess.id, joinSuccess });
  }

  const idsOf = (participants: Array<{ id: string }>) => participants.map((participant) => participant.id).sort();

  it("takes the killed instance's members and waiting participants out, each announced once, and counts only the living", async () => {
    const b = await start();
    const { roomId, moderator, guest } = await room();
    const ann = await join(a, roomId, moderator, 'Ann');
    const cid = await join(c, roomId, guest, 'Cid');
    const bea = await join(b, roomId, guest, 'Bea');
    const bob = await join(b, roomId, moderator, 'Bob');
    bob.command('timer', 'start', { kind: 'stopwatch', enable_ready_check: false });
    const timerId = (await ann.next('timer', 'started')).payload.timer_id;
    // the limit counts the participants on every instance: the room is full
    const refused = await askToJoin(a, roomId, guest, 'Dan');
    expect((await refused.next('control', 'join_blocked')).payload).toMatchObject({ reason: 'participant_limit_reached' });
    await refused.close();

    // a room with a waiting room: its moderator on A, a guest of B waiting
    const lobby = await room({ waiting_room: true });
    const mia = await join(a, lobby.roomId, lobby.moderator, 'Mia');
    const waiter = await askToJoin(b, lobby.roomId, lobby.guest, 'Wes');
    await waiter.next('moderation', 'in_waiting_room');
    const wesId = (await mia.next('moderation', 'joined_waiting_room')).payload.id;

    const killedAt = Date.now();
    b.kill('SIGKILL');
    expect((await b.exited).signal).toBe('SIGKILL');

    for (const survivor of [ann, cid]) {
      const lefts = [(await survivor.next('control', 'left', 10_000)).payload, (await survivor.next('control', 'left', 10_000)).payload];
      expect(Date.now() - killedAt).toBeLessThanOrEqual(BOUND_MS);
      expect(lefts.map((left) => left.reason)).toEqual(['timeout', 'timeout']);
      expect(idsOf(lefts)).toEqual([bea.id, bob.id].sort());
      // the dead moderator's timer ends as when its creator leaves
      expect((await survivor.next('timer', 'stopped', 10_000)).payload).toMatchObject({ timer_id: timerId, kind: 'creator_left' });
    }
    expect((await mia.next('moderation', 'left_waiting_room', 10_000)).payload).toEqual({ message: 'left_waiting_room', id: wesId });
    expect(Date.now() - killedAt).toBeLessThanOrEqual(BOUND_MS);
    // both survivors sweep the room again and again: still nobody hears of a departure twice
    await sleep(GRACE_MS);
    for (const survivor of [ann, cid]) {
      await survivor.expectNothing('control', 'left', 0);
      await survivor.expectNothing('timer', 'stopped', 0);
    }
    await mia.expectNothing('moderation', 'left_waiting_room', 0);

    // later joiners see the living only, and the limit counts them only: two more get in, a third does not
    const dan = await join(a, roomId, guest, 'Dan');
    expect(idsOf(dan.joinSuccess.participants)).toEqual([ann.id, cid.id].sort());
    const eve = await join(c, roomId, guest, 'Eve');
    expect(idsOf(eve.joinSuccess.participants)).toEqual([ann.id, cid.id, dan.id].sort());
    const fay = await askToJoin(a, roomId, guest, 'Fay');
    expect((await fay.next('control', 'join_blocked')).payload).toMatchObject({ reason: 'participant_limit_reached' });
    // a moderator arriving at the waiting room finds nobody waiting
    const max = await join(c, lobby.roomId, lobby.moderator, 'Max');
    expect(max.joinSuccess.moderation).toMatchObject({ waiting_room_enabled: true, waiting_room_participants: [] });
  }, 90_000);

  it('lets a participant of the killed instance come back with its resumption token, under its old id, once the instance is gone', async () => {
    const b = await start();
    const { roomId, moderator, guest } = await room();
    const ann = await join(a, roomId, moderator, 'Ann');
    const inviteCode = (guest as { inviteCode: string }).inviteCode;
    const first = await call(b, 'POST', `/v1/rooms/${roomId}/start_invited`, { body: { invite_code: inviteCode } });
    expect(first.status).toBe(200);
    const bea = new SignalingClient(new WebSocket(`${b.url.replace(/^http/, 'ws')}/signaling`, [DEFAULT_SIGNALING_PROTOCOL, `ticket#${first.body.ticket}`]));
    clients.push(bea);
    await bea.connection.opened;
    bea.command('control', 'join', { display_name: 'Bea' });
    const beaId = (await bea.next('control', 'join_success', 5_000)).payload.id;

    b.kill('SIGKILL');
    await b.exited;
    expect((await ann.next('control', 'left', 10_000)).payload).toMatchObject({ id: beaId, reason: 'timeout' });
    // the record still says connected (nobody could mark it otherwise), yet its instance is dead:
    // the start resumes it rather than answering session_running until it expires (120 s)
    const again = await call(a, 'POST', `/v1/rooms/${roomId}/start_invited`, { body: { invite_code: inviteCode, resumption: first.body.resumption } });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    const back = new SignalingClient(new WebSocket(`${a.url.replace(/^http/, 'ws')}/signaling`, [DEFAULT_SIGNALING_PROTOCOL, `ticket#${again.body.ticket}`]));
    clients.push(back);
    await back.connection.opened;
    back.command('control', 'join', { display_name: 'Bea' });
    expect((await back.next('control', 'join_success', 5_000)).payload.id).toBe(beaId);
    expect((await ann.next('control', 'joined', 5_000)).payload.id).toBe(beaId);
  });

  it('gives a room whose every participant was on the killed instance a fresh session when someone comes back', async () => {
    const b = await start();
    const { roomId, moderator, guest } = await room();
    const bea = await join(b, roomId, moderator, 'Bea');
    const ben = await join(b, roomId, guest, 'Ben');
    const firstClosesAt = Date.parse(bea.joinSuccess.closes_at);
    bea.command('chat', 'send_message', { content: 'before the crash', scope: 'global' });
    await ben.next('chat', 'message_sent');
    bea.command('moderation', 'disable_raise_hands');
    await ben.next('moderation', 'raise_hands_disabled');
    // what the next session must not inherit is there
    const peek = await join(b, roomId, guest, 'Pia');
    expect(peek.joinSuccess.chat.room_history).toHaveLength(1);
    expect(peek.joinSuccess.moderation.raise_hands_enabled).toBe(false);

    b.kill('SIGKILL');
    await b.exited;
    // no live instance hosts the room: nothing is swept until someone comes back, after B's key expired
    await sleep(TTL_MS + SWEEP_MS);
    const joinedAt = Date.now();
    const xia = await join(a, roomId, moderator, 'Xia');
    expect(xia.joinSuccess.participants).toEqual([]);
    expect(xia.joinSuccess.chat.room_history).toEqual([]);
    expect(xia.joinSuccess.moderation.raise_hands_enabled).toBe(true);
    // a new session: the time limit counts from this join, not from the dead session's start
    const closesAt = Date.parse(xia.joinSuccess.closes_at);
    expect(closesAt).toBeGreaterThanOrEqual(joinedAt + TIME_LIMIT_SECS * 1000 - 1);
    expect(closesAt - firstClosesAt).toBeGreaterThanOrEqual(TTL_MS);
    await xia.expectNothing('control', 'left', GRACE_MS);

    // the dead session left nothing in Redis: once the room empties again, none of its keys is there
    await xia.close();
    expect(await roomKeys(roomId)).toEqual([]);
  }, 90_000);

  it('closes the sockets of an instance that was frozen past its lifetime (taken for dead) with 1001, without a second `left`', async () => {
    const b = await start();
    const { roomId, moderator, guest } = await room();
    const ann = await join(a, roomId, moderator, 'Ann');
    const bea = await join(b, roomId, guest, 'Bea');
    await ann.next('control', 'joined');

    b.kill('SIGSTOP'); // a process that stops answering (a long pause, a frozen VM) but comes back
    try {
      const left = (await ann.next('control', 'left', 10_000)).payload;
      expect(left).toEqual({ message: 'left', id: bea.id, reason: 'timeout' });
    } finally {
      b.kill('SIGCONT');
    }
    // back, it finds it was taken for dead: its participant, already seen leaving, is sent to start again
    expect((await within(bea.closed, 5_000)).code).toBe(1001);
    await ann.expectNothing('control', 'left', GRACE_MS);
    // and the instance itself works on: a new join there is seen by everyone
    const ben = await join(b, roomId, guest, 'Ben');
    expect(idsOf(ben.joinSuccess.participants)).toEqual([ann.id]);
    expect((await ann.next('control', 'joined')).payload.id).toBe(ben.id);
  }, 90_000);
});

/** What `promise` resolves to, or a failure after `ms`. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** The room's keys in Redis, polled for up to 3 s until there are none (the departure runs after the socket closed). */
async function roomKeys(roomId: string): Promise<string[]> {
  const redis = new Redis(redisUrl!);
  try {
    const deadline = Date.now() + 3_000;
    for (;;) {
      const keys = await redis.keys(`convene:signaling:room:${roomId}:*`);
      if (keys.length === 0 || Date.now() > deadline) return keys.sort();
      await sleep(20);
    }
  } finally {
    await redis.quit();
  }
}
