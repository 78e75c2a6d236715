/**
 * Two Convene instances over one database and one Redis, with real WebSocket clients on both: one
 * room whichever instance a socket reaches (membership, events, tickets, the waiting room, the
 * participant limit), one timer per room under concurrent starts from both, and a countdown's
 * `expired` sent exactly once although both instances watch it. Needs REDIS_URL: without Redis
 * each instance has its own in-process bus and store, and two instances share nothing.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connect, joinRoom, openAndJoin, startTicket, type SignalingClient, type Starter } from '../../support/signaling-client.js';
import { dbOf, insertInvite, insertRoom, redisUrl, signalingConfig } from '../../support/signaling.js';
import { useTestApp, type TestApp } from '../../support/test-app.js';

if (!redisUrl) console.log('REDIS_URL is not set: the two-instance signaling tests need Redis and are skipped in this run');

const noLimits = { quotas: {}, disabled_modules: [], disabled_features: [] };
/** `pair`: a tariff that lets two participants into a room, for the limit across instances. */
const tariffs = { default: 'default', definitions: { default: noLimits, pair: { ...noLimits, quotas: { room_participant_limit: 2 } } } };

/** After the last expected frame, how long a duplicate is given to show up. */
const GRACE_MS = 400;

describe.skipIf(!redisUrl)('two instances over one database and Redis', () => {
  const one = useTestApp({ ...signalingConfig(), tariffs });
  const two = {} as TestApp;
  beforeAll(async () => {
    Object.assign(two, await one.withConfig({}));
  });
  afterAll(() => two.close?.());

  const clients: SignalingClient[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });

  // each test's owner has a name of its own: an instance caches a token's user for 2 s, and the
  // database is emptied between tests, so a reused name could still map to the last test's user there
  let owners = 0;
  /** A room of a fresh owner: the owner's starter (a moderator each time it starts) and a guests' invite code. */
  async function room(options: { waitingRoom?: boolean; tariff?: string } = {}) {
    const owner = await one.login(`owner${++owners}`);
    const roomId = await insertRoom(one, owner);
    if (options.waitingRoom) await dbOf(one).updateTable('rooms').set({ waiting_room: true }).where('id', '=', roomId).execute();
    if (options.tariff) await dbOf(one).updateTable('users').set({ tariff_name: options.tariff }).where('id', '=', owner.id).execute();
    const moderator: Starter = { roomId, token: owner.accessToken };
    const guest: Starter = { roomId, inviteCode: await insertInvite(one, roomId, owner) };
    return { roomId, moderator, guest };
  }

  /** Joins on the given instance; the client is closed after the test. */
  async function join(app: TestApp, starter: Starter, name: string) {
    const client = await joinRoom(app, starter, name);
    clients.push(client);
    return client;
  }

  const idsOf = (participants: Array<{ id: string }>) => participants.map((p) => p.id).sort();
  const countOf = (client: SignalingClient, namespace: string, message: string) =>
    client.received.filter((frame) => frame.namespace === namespace && frame.payload.message === message).length;

  it('shows every member to everyone, whichever instance each is on', async () => {
    const { moderator, guest } = await room();
    const alice = await join(one, moderator, 'Alice');
    const bob = await join(two, guest, 'Bob');
    expect(bob.joinSuccess.participants).toEqual([expect.objectContaining({ id: alice.joinSuccess.id, control: expect.objectContaining({ display_name: 'Alice', role: 'moderator' }) })]);
    expect((await alice.next('control', 'joined')).payload).toMatchObject({ id: bob.joinSuccess.id, control: { display_name: 'Bob', role: 'guest' } });

    const carol = await join(one, guest, 'Carol');
    expect(idsOf(carol.joinSuccess.participants)).toEqual([alice.joinSuccess.id, bob.joinSuccess.id].sort());
    for (const other of [alice, bob]) expect((await other.next('control', 'joined')).payload.id).toBe(carol.joinSuccess.id);

    await bob.close();
    for (const other of [alice, carol]) expect((await other.next('control', 'left')).payload.id).toBe(bob.joinSuccess.id);
    const dave = await join(two, guest, 'Dave');
    expect(idsOf(dave.joinSuccess.participants)).toEqual([alice.joinSuccess.id, carol.joinSuccess.id].sort());
  });

  it("redeems one instance's ticket on the other, once", async () => {
    const { guest } = await room();
    const { ticket } = await startTicket(one, guest);
    const client = await connect(two, ticket);
    clients.push(client);
    client.command('control', 'join', { display_name: 'Bob' });
    expect((await client.next('control', 'join_success')).payload).toMatchObject({ display_name: 'Bob', role: 'guest' });
    await expect(connect(one, ticket)).rejects.toThrow('upgrade refused with 401');
    await expect(connect(two, ticket)).rejects.toThrow('upgrade refused with 401');
  });

  it('runs one timer for everyone: started on one instance, stopped on the other, seen by a latecomer', async () => {
    const { moderator, guest } = await room();
    const everyone = [await join(one, moderator, 'Alice'), await join(one, guest, 'Bob'), await join(two, moderator, 'Carol'), await join(two, guest, 'Dave')];
    const [alice, , carol] = everyone;
    alice!.command('timer', 'start', { kind: 'stopwatch', title: 'Research', enable_ready_check: false });
    const started = await Promise.all(everyone.map((client) => client.next('timer', 'started')));
    const timerId = started[0]!.payload.timer_id;
    for (const frame of started) expect(frame.payload).toMatchObject({ timer_id: timerId, kind: 'stopwatch', title: 'Research', ready_check_enabled: false });

    const latecomer = await join(two, guest, 'Erin');
    expect(latecomer.joinSuccess.timer).toMatchObject({ timer_id: timerId, kind: 'stopwatch', title: 'Research' });

    carol!.command('timer', 'stop', { timer_id: timerId, reason: 'done' });
    for (const client of [...everyone, latecomer]) {
      expect((await client.next('timer', 'stopped')).payload).toEqual({
        message: 'stopped',
        timer_id: timerId,
        kind: 'by_moderator',
        participant_id: carol!.joinSuccess.id,
        reason: 'done',
      });
    }
  });

  it("sends a countdown's expired exactly once to each participant, on both instances", async () => {
    const { moderator, guest } = await room();
    const everyone = [await join(one, moderator, 'Alice'), await join(two, guest, 'Bob'), await join(one, guest, 'Carol'), await join(two, moderator, 'Dave')];
    everyone[3]!.command('timer', 'start', { kind: 'countdown', duration: 1, enable_ready_check: false });
    const started = (await Promise.all(everyone.map((client) => client.next('timer', 'started'))))[0]!.payload;
    for (const client of everyone) {
      expect((await client.next('timer', 'stopped', 4_000)).payload).toEqual({ message: 'stopped', timer_id: started.timer_id, kind: 'expired' });
    }
    await Promise.all(everyone.map((client) => client.expectNothing('timer', 'stopped', GRACE_MS)));
    // the expired timer is gone for good: a new one may start
    everyone[0]!.command('timer', 'start', { kind: 'stopwatch', enable_ready_check: false });
    for (const client of everyone) expect((await client.next('timer', 'started')).payload.timer_id).not.toBe(started.timer_id);
  });

  it('lets exactly one of 20 concurrent starts from both instances win', async () => {
    const { moderator, guest } = await room();
    const moderators = [await join(one, moderator, 'M1'), await join(one, moderator, 'M2'), await join(two, moderator, 'M3'), await join(two, moderator, 'M4')];
    const guests = [await join(one, guest, 'G1'), await join(two, guest, 'G2')];
    const everyone = [...moderators, ...guests];
    for (let i = 0; i < 5; i++) {
      for (const client of moderators) client.command('timer', 'start', { kind: 'stopwatch', title: `start ${i}`, enable_ready_check: false });
    }
    const started = await Promise.all(everyone.map((client) => client.next('timer', 'started')));
    expect(new Set(started.map((frame) => frame.payload.timer_id)).size).toBe(1);

    const errors = () => moderators.reduce((sum, client) => sum + countOf(client, 'timer', 'error'), 0);
    const deadline = Date.now() + 3_000;
    while (errors() < 19 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    await Promise.all(everyone.map((client) => client.expectNothing('timer', 'started', GRACE_MS)));
    expect(errors()).toBe(19);
    for (const client of moderators) {
      for (const frame of client.received.filter((f) => f.namespace === 'timer' && f.payload.message === 'error')) {
        expect(frame.payload).toEqual({ message: 'error', error: 'timer_already_running' });
      }
    }
    for (const client of everyone) expect(countOf(client, 'timer', 'started')).toBe(1);
    for (const client of guests) expect(countOf(client, 'timer', 'error')).toBe(0);
  });

  it("stops the timer on both instances when its creator leaves one", async () => {
    const { moderator, guest } = await room();
    const creator = await join(one, moderator, 'Alice');
    const others = [await join(one, guest, 'Bob'), await join(two, moderator, 'Carol'), await join(two, guest, 'Dave')];
    creator.command('timer', 'start', { kind: 'countdown', duration: 600, enable_ready_check: false });
    const { payload: started } = await creator.next('timer', 'started');
    for (const client of others) await client.next('timer', 'started');

    await creator.close();
    for (const client of others) {
      expect((await client.next('timer', 'stopped')).payload).toEqual({ message: 'stopped', timer_id: started.timer_id, kind: 'creator_left' });
      expect((await client.next('control', 'left')).payload.id).toBe(creator.joinSuccess.id);
    }
    await Promise.all(others.map((client) => client.expectNothing('timer', 'stopped', GRACE_MS)));
    const latecomer = await join(two, guest, 'Erin');
    expect(latecomer.joinSuccess.timer).toBeUndefined();
  });

  it('lets a moderator on one instance admit a guest waiting on the other', async () => {
    const { moderator, guest } = await room({ waitingRoom: true });
    const alice = await join(one, moderator, 'Alice');
    const bob = await openAndJoin(two, guest, 'Bob');
    clients.push(bob);
    await bob.next('moderation', 'in_waiting_room');
    const { payload: waiting } = await alice.next('moderation', 'joined_waiting_room');
    expect(waiting.control).toMatchObject({ display_name: 'Bob', role: 'guest' });

    // a moderator arriving later on the other instance sees the waiting guest too
    const carol = await join(two, moderator, 'Carol');
    expect(idsOf(carol.joinSuccess.moderation!.waiting_room_participants)).toEqual([waiting.id]);
    expect((await alice.next('control', 'joined')).payload.id).toBe(carol.joinSuccess.id);

    bob.command('control', 'enter_room');
    expect((await bob.next('control', 'error')).payload.error).toBe('not_accepted_or_not_in_waiting_room');

    alice.command('moderation', 'accept', { target: waiting.id });
    await bob.next('moderation', 'accepted');
    for (const client of [alice, carol]) expect((await client.next('moderation', 'left_waiting_room')).payload.id).toBe(waiting.id);

    bob.command('control', 'enter_room');
    const { payload: entered } = await bob.next('control', 'join_success');
    expect(entered.id).toBe(waiting.id);
    expect(idsOf(entered.participants)).toEqual([alice.joinSuccess.id, carol.joinSuccess.id].sort());
    for (const client of [alice, carol]) expect((await client.next('control', 'joined')).payload.id).toBe(waiting.id);
  });

  it("holds the tariff's participant limit across instances", async () => {
    const { moderator, guest } = await room({ tariff: 'pair' });
    const alice = await join(one, moderator, 'Alice');
    const bob = await join(two, guest, 'Bob');
    for (const [app, name] of [[one, 'Carol'], [two, 'Dave']] as const) {
      const blocked = await openAndJoin(app, guest, name);
      clients.push(blocked);
      expect((await blocked.next('control', 'join_blocked')).payload).toEqual({ message: 'join_blocked', reason: 'participant_limit_reached' });
    }
    // a place freed on one instance is free on the other
    await bob.close();
    await alice.next('control', 'left');
    const erin = await join(one, guest, 'Erin');
    expect(idsOf(erin.joinSuccess.participants)).toEqual([alice.joinSuccess.id]);
  });
});
