/**
 * An instance dies mid-meeting, with media: two Convene processes (src/main.ts,
 * test/support/child-server.ts) over one PostgreSQL database and one Redis, with short liveness
 * settings (as test/integration/signaling-crash/killed-instance.test.ts), and one real Janus
 * (test/support/janus.ts). A's page is on the first instance, B's on the second, both publishing
 * and receiving each other (headless Chromium, test/support/media-page.ts).
 *
 * SIGKILL of B's instance: A hears B leave; B's publisher is out of the Janus room and B's
 * instance's Janus session is gone (its socket closed with the process); when A leaves too the
 * Janus room is destroyed and the room's media keys are gone from Redis. A room whose every
 * participant was on the killed instance keeps its Janus room until someone comes back: that join
 * sweeps the dead, and the last of them out destroys it.
 * SIGSTOP of B's instance: A hears B leave once B's instance is taken for dead, and the survivor's
 * sweep kicks B's publisher out of the Janus room while the frozen instance's Janus session still
 * lives; that session ends at Janus's session_timeout. Thawed, the instance tells A nothing more
 * of B (it once sent an `update` of B, from ending B's streams when it found its Janus session
 * gone) and works on: a newcomer there publishes to A, and the room is cleaned up when everyone
 * has left.
 *
 * Skips, with the reason printed, without Chromium, Janus or network namespaces, and without
 * REDIS_URL and DATABASE_URL (instances in separate processes share a database server).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, childEnv, freshServerDatabase, killChildren, loginTo, startChild, type ChildServer } from '../support/child-server.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../support/chromium.js';
import { janusUnavailable, startJanus, type TestJanus } from '../support/janus.js';
import { eventually, idOf, joinPage, receiving, until, videoroom, type Participant } from '../support/media-call.js';
import { framesOf, MEDIA_CHROMIUM_ARGS, publishFrom, snapshotOf } from '../support/media-page.js';
import { startTestIssuer, type TestIssuer } from '../support/oidc-issuer.js';
import { UNCAPPED_TOML } from '../support/signaling.js';

const redisUrl = process.env.REDIS_URL || undefined;
const databaseUrl = process.env.DATABASE_URL || undefined;
const unavailable = !existsSync(CHROMIUM)
  ? `${CHROMIUM} is missing (Debian's chromium package)`
  : (janusUnavailable ?? (!redisUrl || !databaseUrl ? 'REDIS_URL or DATABASE_URL is not set (instances in separate processes share them)' : undefined));
if (unavailable) console.warn(`test/media/media-crash.test.ts skipped: ${unavailable}`);

const TTL_MS = 1_000;
const SWEEP_MS = 250;
/** Janus drops a session after this long without a request: long enough to see a frozen instance's session outlive the sweep. */
const SESSION_TIMEOUT_S = 8;

const ROOM_PREFIX = 'convene:signaling:room:';

describe.skipIf(unavailable !== undefined)('an instance that dies mid-meeting, with media', () => {
  let janus: TestJanus;
  let browser: Browser;
  let issuer: TestIssuer;
  let database: { url: string; drop(): Promise<void> };
  let redis: Redis;
  let first: ChildServer;
  let owner: string;
  const dirs: string[] = [];
  const opened: Participant[] = [];

  /** Short liveness (as killed-instance.test.ts), and the test Janus kept alive well within its session_timeout. */
  const config = () => `
[signaling]
instance_ttl_ms = ${TTL_MS}
instance_refresh_ms = ${TTL_MS / 4}
crash_sweep_interval_ms = ${SWEEP_MS}

[media]
janus_urls = ["${janus.url}"]
keepalive_interval_ms = 1000

${UNCAPPED_TOML}`;

  function start(): Promise<ChildServer> {
    const cwd = mkdtempSync(joinPath(tmpdir(), 'convene-media-crash-'));
    dirs.push(cwd);
    writeFileSync(joinPath(cwd, 'convene.toml'), config());
    return startChild(cwd, childEnv(cwd, issuer, { DATABASE_URL: database.url, REDIS_URL: redisUrl!, CONVENE_CONFIG: joinPath(cwd, 'convene.toml') }));
  }

  beforeAll(async () => {
    janus = await startJanus({ sessionTimeoutS: SESSION_TIMEOUT_S });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, ...MEDIA_CHROMIUM_ARGS] });
    issuer = await startTestIssuer({ clientId: 'convene' });
    database = await freshServerDatabase(databaseUrl!);
    redis = new Redis(redisUrl!);
    first = await start(); // migrates the database before the others open it
    owner = await loginTo(first, issuer, 'owner');
  }, 120_000);

  afterAll(async () => {
    await Promise.all(opened.map((participant) => participant.context.close().catch(() => undefined)));
    await killChildren();
    await browser?.close();
    await janus?.close();
    redis?.disconnect();
    await database?.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    await issuer?.close();
  });

  /** A room of the owner's, and an invite code to it. */
  async function room(): Promise<{ roomId: string; inviteCode: string }> {
    const created = await call(first, 'POST', '/v1/rooms', { token: owner, body: { enable_sip: false } });
    expect(created.status).toBe(201);
    const roomId = created.body.id as string;
    const invite = await call(first, 'POST', `/v1/rooms/${roomId}/invites`, { token: owner, body: {} });
    expect(invite.status).toBe(200);
    return { roomId, inviteCode: invite.body.invite_code };
  }

  /** A participant's page on `child`: as the owner, or as a guest with the invite code. */
  async function join(child: ChildServer, roomId: string, name: string, inviteCode?: string): Promise<Participant> {
    const started = inviteCode
      ? await call(child, 'POST', `/v1/rooms/${roomId}/start_invited`, { body: { invite_code: inviteCode } })
      : await call(child, 'POST', `/v1/rooms/${roomId}/start`, { token: owner, body: {} });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const participant = await joinPage(browser, child.url, name, started.body.ticket);
    opened.push(participant);
    return participant;
  }

  async function leave(participant: Participant): Promise<void> {
    await participant.context.close();
    opened.splice(opened.indexOf(participant), 1);
  }

  /** Alice on the first instance and Bob on `second`, each publishing and receiving the other. */
  async function callAcross(second: ChildServer) {
    const { roomId, inviteCode } = await room();
    const alice = await join(first, roomId, 'alice');
    const bob = await join(second, roomId, 'bob', inviteCode);
    const [aliceId, bobId] = [await idOf(alice), await idOf(bob)];
    await publishFrom(alice.page, 'alice', 'video');
    await publishFrom(bob.page, 'bob', 'video');
    await receiving(alice, `${bobId}:video`);
    await receiving(bob, `${aliceId}:video`);
    const janusRoom = await janusRoomOf(roomId);
    expect(await displays(janusRoom)).toEqual([`${aliceId}|video`, `${bobId}|video`].sort());
    return { roomId, inviteCode, alice, bob, aliceId, bobId, janusRoom };
  }

  /** The room's Janus room id, as the media store pinned it (`<janusRoomId> <server>`). */
  async function janusRoomOf(roomId: string): Promise<number> {
    const pin = await redis.get(`${ROOM_PREFIX}${roomId}:media:janus_room`);
    expect(pin?.split(' ')[1]).toBe(janus.url);
    return Number(pin!.split(' ')[0]);
  }

  /** The displays (`<participant>|<type>`) of the publishers in the Janus room. */
  async function displays(janusRoom: number): Promise<string[]> {
    const { participants } = await videoroom(janus.url, { request: 'listparticipants', room: janusRoom });
    return (participants as Array<{ display: string }>).map((participant) => participant.display).sort();
  }

  /** Once everyone left: the Janus room is destroyed and none of the room's media keys is left in Redis. */
  async function expectMediaGone(roomId: string, janusRoom: number): Promise<void> {
    await eventually(async () => expect((await videoroom(janus.url, { request: 'exists', room: janusRoom })).exists).toBe(false));
    await eventually(async () => expect(await redis.keys(`${ROOM_PREFIX}${roomId}:media:*`)).toEqual([]));
  }

  /** The Janus session a child opened (its log says so). */
  const sessionOf = async (child: ChildServer) => (await child.logged('janus: session up')).sessionId as number;

  it("takes a killed instance's publisher out of the Janus room and its session out of Janus, and cleans the room up when the last one leaves", async () => {
    const second = await start();
    const { roomId, alice, bobId, aliceId, janusRoom } = await callAcross(second);
    const [firstSession, secondSession] = [await sessionOf(first), await sessionOf(second)];
    expect(await janus.sessions()).toEqual(expect.arrayContaining([firstSession, secondSession]));

    second.kill('SIGKILL');
    expect((await second.exited).signal).toBe('SIGKILL');
    const left = await until(alice, (snapshot) => framesOf(snapshot, 'control', 'left').some((frame) => frame.payload.id === bobId));
    expect(framesOf(left, 'control', 'left')).toEqual([expect.objectContaining({ payload: { message: 'left', id: bobId, reason: 'timeout' } })]);
    await eventually(async () => expect(await displays(janusRoom)).toEqual([`${aliceId}|video`]));
    const sessions = await janus.sessions();
    expect(sessions).toContain(firstSession);
    expect(sessions).not.toContain(secondSession);

    await leave(alice);
    await expectMediaGone(roomId, janusRoom);
    await eventually(async () => expect(await janus.handles()).toEqual([]));
  }, 90_000);

  it('destroys the Janus room of a room whose every participant was on the killed instance once someone comes back', async () => {
    const second = await start();
    const { roomId, inviteCode } = await room();
    const bea = await join(second, roomId, 'bea');
    const ben = await join(second, roomId, 'ben', inviteCode);
    await publishFrom(bea.page, 'bea', 'video');
    await receiving(ben, `${await idOf(bea)}:video`);
    const janusRoom = await janusRoomOf(roomId);

    second.kill('SIGKILL');
    await second.exited;
    // no live instance hosts the room: its Janus room stays until someone comes back after the key expired
    await sleep(TTL_MS + SWEEP_MS);
    expect((await videoroom(janus.url, { request: 'exists', room: janusRoom })).exists).toBe(true);
    const xia = await join(first, roomId, 'xia', inviteCode);
    // the join swept the dead, and the last of them out took the Janus room and the media state along
    await expectMediaGone(roomId, janusRoom);

    // media starts afresh: a new Janus room
    const yan = await join(first, roomId, 'yan', inviteCode);
    await publishFrom(xia.page, 'xia', 'video');
    await receiving(yan, `${await idOf(xia)}:video`);
    const fresh = await janusRoomOf(roomId);
    expect(fresh).not.toBe(janusRoom);
    await Promise.all([xia, yan].map(leave));
    await expectMediaGone(roomId, fresh);
  }, 90_000);

  it("kicks a frozen instance's publisher out of the Janus room while its session lives on until Janus's session_timeout", async () => {
    const second = await start();
    const { roomId, inviteCode, alice, bob, aliceId, bobId, janusRoom } = await callAcross(second);
    const secondSession = await sessionOf(second);

    second.kill('SIGSTOP'); // a process that stops answering but comes back
    try {
      await until(alice, (snapshot) => framesOf(snapshot, 'control', 'left').some((frame) => frame.payload.id === bobId));
      // the survivor swept Bob and kicked his publisher: the frozen instance's session could not have
      await eventually(async () => expect(await displays(janusRoom)).toEqual([`${aliceId}|video`]));
      expect(await janus.sessions()).toContain(secondSession);
      // nothing keeps the session alive: Janus drops it after its session_timeout
      await eventually(async () => expect(await janus.sessions()).not.toContain(secondSession), SESSION_TIMEOUT_S * 1000 + 10_000);
    } finally {
      second.kill('SIGCONT');
    }
    // thawed, the instance closes Bob's socket (taken for gone) and opens a new Janus session; what it
    // hears of Bob's dead handles tells the others nothing more about Bob
    expect((await until(bob, (snapshot) => snapshot.closed !== undefined)).closed).toBe(1001);
    await eventually(async () => expect((await janus.sessions()).length).toBe(2));
    const control = (await snapshotOf(alice.page, 'alice')).frames.map((text) => JSON.parse(text)).filter((frame) => frame.namespace === 'control');
    const aboutBob = control.filter((frame) => frame.payload.id === bobId).map((frame) => frame.payload.message as string);
    expect(aboutBob.slice(aboutBob.indexOf('left'))).toEqual(['left']);
    await leave(bob);
    const cid = await join(second, roomId, 'cid', inviteCode);
    await publishFrom(cid.page, 'cid', 'video');
    await receiving(alice, `${await idOf(cid)}:video`);
    await receiving(cid, `${aliceId}:video`);

    await Promise.all([alice, cid].map(leave));
    await expectMediaGone(roomId, janusRoom);
  }, 90_000);
});
