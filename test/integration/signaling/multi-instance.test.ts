/**
 * Two Convene instances over one database and one Redis, with real WebSocket clients on both: one
 * room whichever instance a socket reaches (membership, events, tickets, the waiting room, the
 * participant limit), one timer per room started and stopped from either side, 20 concurrent
 * starts from both of which exactly one wins, a countdown's `expired` sent exactly once although
 * both instances watch it, the creator's departure ending the timer on both, and nothing of the
 * room left in Redis once its last participant, on either instance, is gone. Needs REDIS_URL:
 * without Redis each instance has its own in-process bus and store, and two instances share nothing.
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { roomChannel } from '../../../src/signaling/bus/redis.js';
import { connect, openAndJoin, startTicket, type SignalingClient, type Starter } from '../../support/signaling-client.js';
import { redisUrl } from '../../support/signaling.js';
import { roomKeysLeft, useSignalingRooms } from '../../support/signaling-rooms.js';
import type { TestApp } from '../../support/test-app.js';

if (!redisUrl) console.log('REDIS_URL is not set: the two-instance signaling tests need Redis and are skipped in this run');

/** After the last expected frame, how long a duplicate is given to show up. */
const GRACE_MS = 400;

describe.skipIf(!redisUrl)('two instances over one database and Redis', () => {
  /** `pair`: a tariff that lets two participants into a room, for the limit across instances. */
  const { app: one, room, join: joinOn } = useSignalingRooms({ pair: { quotas: { room_participant_limit: 2 } } });
  const two = {} as TestApp;
  beforeAll(async () => {
    Object.assign(two, await one.withConfig({}));
  });
  afterAll(() => two.close?.());

  /** Joins on the given instance; the client is closed after the test. */
  const join = (app: TestApp, starter: Starter, name: string) => joinOn(starter, name, app);

  // sockets opened here rather than by `join` (which closes its own after each test)
  const opened: SignalingClient[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((client) => client.close()));
  });
  /** Opens and sends `join` on the given instance, not waiting for an answer (the waiting room, a block). */
  async function askToJoin(app: TestApp, starter: Starter, name: string) {
    const client = await openAndJoin(app, starter, name);
    opened.push(client);
    return client;
  }

  const idsOf = (participants: Array<{ id: string }>) => participants.map((p) => p.id).sort();

  it('shows every member to everyone, whichever instance each is on', async () => {
    const { moderator, guest } = await room();
    const alice = await join(one, moderator, 'Alice');
    const bob = await join(two, guest, 'Bob');
    expect(bob.joinSuccess.participants).toEqual([
      expect.objectContaining({ id: alice.joinSuccess.id, control: expect.objectContaining({ display_name: 'Alice', role: 'moderator' }) }),
    ]);
    expect((await alice.next('control', 'joined')).payload).toMatchObject({ id: bob.joinSuccess.id, control: { display_name: 'Bob', role: 'guest' } });

    const carol = await join(one, guest, 'Carol');
    expect(idsOf(carol.joinSuccess.participants)).toEqual([alice.joinSuccess.id, bob.joinSuccess.id].sort());
    for (const other of [alice, bob]) expect((await other.next('control', 'joined')).payload.id).toBe(carol.joinSuccess.id);

    await bob.close();
    for (const other of [alice, carol]) expect((await other.next('control', 'left')).payload.id).toBe(bob.joinSuccess.id);
    const dave = await join(two, guest, 'Dave');
    expect(idsOf(dave.joinSuccess.participants)).toEqual([alice.joinSuccess.id, carol.joinSuccess.id].sort());
  });

  it("redeems one instance's ticket on the other, once, and joins the room there", async () => {
    const { guest } = await room();
    const { ticket } = await startTicket(one, guest);
    const client = await connect(two, ticket);
    opened.push(client);
    client.command('control', 'join', { display_name: 'Bob' });
    expect((await client.next('control', 'join_success')).payload).toMatchObject({ display_name: 'Bob', role: 'guest' });
    await expect(connect(one, ticket)).rejects.toThrow(/upgrade refused with 401: .*"invalid_ticket"/);
    await expect(connect(two, ticket)).rejects.toThrow(/upgrade refused with 401: .*"invalid_ticket"/);
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

  it('lets exactly one of 20 concurrent starts, 10 from each instance, win', async () => {
    const { moderator, guest } = await room();
    const moderators = await Promise.all(Array.from({ length: 20 }, (_, i) => join(i % 2 ? two : one, moderator, `M${i + 1}`)));
    const guests = [await join(one, guest, 'G1'), await join(two, guest, 'G2')];
    const everyone = [...moderators, ...guests];
    moderators.forEach((client, i) => client.command('timer', 'start', { kind: 'stopwatch', title: `start ${i + 1}`, enable_ready_check: false }));

    const started = await Promise.all(everyone.map((client) => client.next('timer', 'started')));
    expect(new Set(started.map((frame) => frame.payload.timer_id)).size).toBe(1);
    // every moderator but the winner (whose title the timer has) is refused, the winner is not
    const losers = moderators.filter((_, i) => `start ${i + 1}` !== started[0]!.payload.title);
    expect(losers).toHaveLength(19);
    for (const client of losers) expect((await client.next('timer', 'error')).payload).toEqual({ message: 'error', error: 'timer_already_running' });
    // and nobody gets a second started, or anything else of the timer
    await Promise.all(everyone.map((client) => client.expectNothing('timer', undefined, GRACE_MS)));
  });

  it('stops the timer on both instances when its creator leaves one', async () => {
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
    const bob = await askToJoin(two, guest, 'Bob');
    await bob.next('moderation', 'in_waiting_room');
    const { payload: waiting } = await alice.next('moderation', 'joined_waiting_room');
    expect(waiting.control).toMatchObject({ display_name: 'Bob', role: 'guest' });

    // a moderator arriving later on the other instance sees the waiting guest too
    const carol = await join(two, moderator, 'Carol');
    expect(idsOf(carol.joinSuccess.moderation!.waiting_room_participants!)).toEqual([waiting.id]);
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
    for (const [app, name] of [
      [one, 'Carol'],
      [two, 'Dave'],
    ] as const) {
      const blocked = await askToJoin(app, guest, name);
      expect((await blocked.next('control', 'join_blocked')).payload).toEqual({ message: 'join_blocked', reason: 'participant_limit_reached' });
    }
    // a place freed on one instance is free on the other
    await bob.close();
    await alice.next('control', 'left');
    const erin = await join(one, guest, 'Erin');
    expect(idsOf(erin.joinSuccess.participants)).toEqual([alice.joinSuccess.id]);
  });

  it('leaves no key and no subscription of the room in Redis once its last participant, on either instance, is gone', async () => {
    const { roomId, moderator, guest } = await room({ waitingRoom: true });
    const alice = await join(one, moderator, 'Alice');
    const bob = await join(two, moderator, 'Bob');
    const gus = await askToJoin(two, guest, 'Gus');
    await gus.next('moderation', 'in_waiting_room');
    const { payload: waiting } = await alice.next('moderation', 'joined_waiting_room');
    const hal = await askToJoin(one, guest, 'Hal');
    await hal.next('moderation', 'in_waiting_room');
    alice.command('moderation', 'accept', { target: waiting.id });
    await gus.next('moderation', 'accepted');
    // a running countdown (the creator stays to the end) with a ready status
    alice.command('timer', 'start', { kind: 'countdown', duration: 600, enable_ready_check: true });
    const { payload: started } = await bob.next('timer', 'started');
    bob.command('timer', 'update_ready_status', { timer_id: started.timer_id, status: true });
    await alice.next('timer', 'updated_ready_status');
    const key = (name: string) => `convene:signaling:room:${roomId}:${name}`;
    // `hosts` and `waiting_hosts`: the instance of each record, for crash cleanup (membership-sweep.ts)
    const names = [
      'accepted',
      'changes',
      'host_instances',
      'hosts',
      'members',
      'started_at',
      'timer',
      'timer_ready',
      'versions',
      'waiting',
      'waiting_host_instances',
      'waiting_hosts',
    ];
    expect(await roomKeysLeft(roomId, 0)).toEqual(names.map(key));
    const redis = new Redis(redisUrl!);
    try {
      const subscribers = async () => ((await redis.pubsub('NUMSUB', roomChannel(roomId))) as [string, number])[1];
      expect(await subscribers()).toBe(2); // one subscription per instance

      for (const client of [gus, hal, bob, alice]) await client.close();
      expect(await roomKeysLeft(roomId)).toEqual([]);
      const deadline = Date.now() + 3_000;
      while ((await subscribers()) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await subscribers()).toBe(0);
    } finally {
      await redis.quit();
    }
  });
});
