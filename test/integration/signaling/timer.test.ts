/**
 * The timer module over real WebSockets (the contract): moderators start and stop,
 * everyone (the sender included) sees `started` and `stopped`, a countdown expires once, the ready
 * check reaches everyone and each participant's `timer` data, a latecomer finds the running timer
 * in `join_success`, the creator's departure stops it, rooms keep their timers apart, and (on
 * Redis) an ended timer leaves no key behind. Every frame is checked against the contract by the
 * test client.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { joinRoom, type SignalingClient, type Starter } from '../../support/signaling-client.js';
import { insertInvite, insertRoom, inviteToRoomEvent, redisUrl, useSignalingApp } from '../../support/signaling.js';

/** After the last expected frame, how long a duplicate or stray frame is given to show up. */
const GRACE_MS = 200;
const STOPWATCH = { kind: 'stopwatch', enable_ready_check: false };

describe('signaling timer', () => {
  const app = useSignalingApp();

  const clients: SignalingClient[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });

  // each test's users have names of their own: an instance caches a token's user for a while, and
  // the database is emptied between tests
  let rooms = 0;
  /** A room: its owner (a moderator each time it joins), an invited user (role `user`) and a guest's invite code. */
  async function room() {
    const n = ++rooms;
    const [owner, invitee] = [await app.login(`owner${n}`), await app.login(`invitee${n}`)];
    const roomId = await insertRoom(app, owner);
    await inviteToRoomEvent(app, roomId, owner, invitee);
    const moderator: Starter = { roomId, token: owner.accessToken };
    const user: Starter = { roomId, token: invitee.accessToken };
    const guest: Starter = { roomId, inviteCode: await insertInvite(app, roomId, owner) };
    return { moderator, user, guest };
  }

  async function join(starter: Starter, name: string) {
    const client = await joinRoom(app, starter, name);
    clients.push(client);
    return client;
  }

  /** A moderator, a user and a guest in one room. */
  async function threeInARoom() {
    const { moderator, user, guest } = await room();
    const alice = await join(moderator, 'Alice');
    const bob = await join(user, 'Bob');
    const gina = await join(guest, 'Gina');
    // the joins the others were told of, out of the way
    for (const client of [alice, alice, bob]) await client.next('control', 'joined');
    return { alice, bob, gina, everyone: [alice, bob, gina], starters: { moderator, user, guest } };
  }

  /** The next `timer` event of each client, checked to be the same for all; its payload. */
  async function sameForAll(clients: SignalingClient[], message: string) {
    const frames = await Promise.all(clients.map((client) => client.next('timer', message)));
    for (const frame of frames) expect(frame.payload).toEqual(frames[0]!.payload);
    return frames[0]!.payload;
  }

  const quiet = (clients: SignalingClient[], message?: string) => Promise.all(clients.map((client) => client.expectNothing('timer', message, GRACE_MS)));

  it('sends a moderator’s countdown to everyone, the sender included', async () => {
    const { alice, everyone } = await threeInARoom();
    alice.command('timer', 'start', { kind: 'countdown', duration: 300, title: 'Research timer', style: 'normal', enable_ready_check: true });
    const started = await sameForAll(everyone, 'started');
    expect(started).toEqual({
      message: 'started',
      timer_id: expect.any(String),
      kind: 'countdown',
      started_at: expect.any(String),
      ends_at: expect.any(String),
      title: 'Research timer',
      style: 'normal',
      ready_check_enabled: true,
    });
    expect(Date.parse(started.ends_at) - Date.parse(started.started_at)).toBe(300_000);
    expect(Math.abs(Date.parse(started.started_at) - Date.now())).toBeLessThan(5_000);
  });

  it('sends a stopwatch without an end and without the fields not given', async () => {
    const { alice, everyone } = await threeInARoom();
    alice.command('timer', 'start', STOPWATCH);
    const started = await sameForAll(everyone, 'started');
    expect(Object.keys(started).sort()).toEqual(['kind', 'message', 'ready_check_enabled', 'started_at', 'timer_id']);
  });

  it('answers the errors to the sender only, in the order permission, duration, running timer', async () => {
    const { alice, bob, gina, everyone } = await threeInARoom();
    gina.command('timer', 'start', { kind: 'countdown', duration: 0, enable_ready_check: false });
    expect((await gina.next('timer', 'error')).payload).toEqual({ message: 'error', error: 'insufficient_permissions' });
    bob.command('timer', 'start', STOPWATCH);
    expect((await bob.next('timer', 'error')).payload).toEqual({ message: 'error', error: 'insufficient_permissions' });
    alice.command('timer', 'start', { kind: 'countdown', duration: 1.5, enable_ready_check: false });
    expect((await alice.next('timer', 'error')).payload).toEqual({ message: 'error', error: 'invalid_duration' });
    alice.command('timer', 'start', { kind: 'countdown', enable_ready_check: false });
    expect((await alice.next('timer', 'error')).payload).toEqual({ message: 'error', error: 'invalid_duration' });
    await quiet(everyone);

    alice.command('timer', 'start', STOPWATCH);
    await sameForAll(everyone, 'started');
    alice.command('timer', 'start', STOPWATCH);
    expect((await alice.next('timer', 'error')).payload).toEqual({ message: 'error', error: 'timer_already_running' });
    gina.command('timer', 'start', STOPWATCH);
    expect((await gina.next('timer', 'error')).payload).toEqual({ message: 'error', error: 'insufficient_permissions' });
    await quiet(everyone);
  });

  it('answers a countdown duration of the wrong type with invalid_duration, and a frame malformed otherwise as a malformed command', async () => {
    const { alice, everyone } = await threeInARoom();
    for (const duration of ['5', '60', true, {}, { seconds: 60 }, [60], null]) {
      alice.command('timer', 'start', { kind: 'countdown', duration, enable_ready_check: false });
      expect((await alice.next('timer', 'error')).payload, JSON.stringify(duration)).toEqual({ message: 'error', error: 'invalid_duration' });
    }
    // the duration is fine or wrong: another field is malformed, which is the generic answer
    for (const malformed of [
      { kind: 'hourglass', duration: '5', enable_ready_check: false },
      { kind: 'countdown', duration: '5', enable_ready_check: 'yes' },
      { kind: 'countdown', duration: 60 },
    ]) {
      alice.command('timer', 'start', malformed);
      expect((await alice.next('control', 'error')).payload, JSON.stringify(malformed)).toMatchObject({
        error: 'invalid_message',
        details: { namespace: 'timer', action: 'start' },
      });
    }
    await quiet(everyone);
    // a stopwatch ignores its duration, whatever it is
    alice.command('timer', 'start', { ...STOPWATCH, duration: 'never' });
    await sameForAll(everyone, 'started');
  });

  it('takes a title and a reason of 255 characters and a style of 64, and refuses one more as a malformed command', async () => {
    const { alice } = await threeInARoom();
    const refused = async (problem: string) => {
      const { payload } = await alice.next('control', 'error');
      expect(payload).toMatchObject({ error: 'invalid_message' });
      expect(payload.details?.problems?.join(' ')).toContain(problem);
    };
    alice.command('timer', 'start', { ...STOPWATCH, title: '😀'.repeat(256) });
    await refused('/payload/title');
    alice.command('timer', 'start', { ...STOPWATCH, style: 's'.repeat(65) });
    await refused('/payload/style');
    alice.command('timer', 'start', { ...STOPWATCH, title: '😀'.repeat(255), style: 's'.repeat(64) });
    const { payload: started } = await alice.next('timer', 'started');
    expect([started.title, started.style]).toEqual(['😀'.repeat(255), 's'.repeat(64)]);

    alice.command('timer', 'stop', { timer_id: started.timer_id, reason: 'r'.repeat(256) });
    await refused('/payload/reason');
    alice.command('timer', 'stop', { timer_id: started.timer_id, reason: 'r'.repeat(255) });
    expect((await alice.next('timer', 'stopped')).payload).toMatchObject({ kind: 'by_moderator', reason: 'r'.repeat(255) });
    await quiet([alice]);
  });

  it('stops the timer for everyone with the moderator and the reason; a guest may not', async () => {
    const { alice, gina, everyone } = await threeInARoom();
    alice.command('timer', 'start', STOPWATCH);
    const { timer_id } = await sameForAll(everyone, 'started');
    gina.command('timer', 'stop', { timer_id });
    expect((await gina.next('timer', 'error')).payload).toEqual({ message: 'error', error: 'insufficient_permissions' });
    alice.command('timer', 'stop', { timer_id: '3b241101-e2bb-4255-8caf-4136c566a962' });
    await quiet(everyone);

    alice.command('timer', 'stop', { timer_id, reason: 'Everyone is done' });
    expect(await sameForAll(everyone, 'stopped')).toEqual({
      message: 'stopped',
      timer_id,
      kind: 'by_moderator',
      participant_id: alice.joinSuccess.id,
      reason: 'Everyone is done',
    });
    alice.command('timer', 'stop', { timer_id });
    await quiet(everyone);
  });

  it('expires a one-second countdown once, for everyone', async () => {
    const { alice, everyone } = await threeInARoom();
    alice.command('timer', 'start', { kind: 'countdown', duration: 1, enable_ready_check: false });
    const { timer_id, ends_at } = await sameForAll(everyone, 'started');
    const frames = await Promise.all(everyone.map((client) => client.next('timer', 'stopped', 3_000)));
    for (const frame of frames) {
      expect(frame.payload).toEqual({ message: 'stopped', timer_id, kind: 'expired' });
      expect(Date.parse(frame.timestamp)).toBeGreaterThanOrEqual(Date.parse(ends_at));
    }
    await quiet(everyone);
  });

  it('sends each ready status to everyone and with the participant’s update', async () => {
    const { alice, bob, gina, everyone } = await threeInARoom();
    gina.command('timer', 'update_ready_status', { timer_id: '3b241101-e2bb-4255-8caf-4136c566a962', status: true });
    alice.command('timer', 'start', { kind: 'countdown', duration: 300, enable_ready_check: true });
    const { timer_id } = await sameForAll(everyone, 'started');

    gina.command('timer', 'update_ready_status', { timer_id, status: true });
    expect(await sameForAll(everyone, 'updated_ready_status')).toEqual({
      message: 'updated_ready_status',
      timer_id,
      participant_id: gina.joinSuccess.id,
      status: true,
    });
    for (const other of [alice, bob]) {
      expect((await other.next('control', 'update')).payload).toMatchObject({ id: gina.joinSuccess.id, timer: { ready_status: true } });
    }
    await gina.expectNothing('control', 'update', 0);
    await quiet(everyone);
  });

  it('ignores ready statuses when the ready check is off', async () => {
    const { alice, gina, everyone } = await threeInARoom();
    alice.command('timer', 'start', STOPWATCH);
    const { timer_id } = await sameForAll(everyone, 'started');
    gina.command('timer', 'update_ready_status', { timer_id, status: true });
    await quiet(everyone);
    await alice.expectNothing('control', 'update', 0);
  });

  it('shows a latecomer the running timer and everyone’s ready status, and the others the latecomer’s', async () => {
    const { alice, bob, gina, everyone, starters } = await threeInARoom();
    alice.command('timer', 'start', { kind: 'countdown', duration: 300, style: 'coffee-break', enable_ready_check: true });
    const { message: _, ...timer } = await sameForAll(everyone, 'started');
    bob.command('timer', 'update_ready_status', { timer_id: timer.timer_id, status: true });
    await sameForAll(everyone, 'updated_ready_status');

    const late = await join(starters.guest, 'Late');
    expect(late.joinSuccess.timer).toEqual({ ...timer, ready_status: false });
    const statuses = Object.fromEntries(late.joinSuccess.participants.map((p) => [p.id, p.timer]));
    expect(statuses).toEqual({
      [alice.joinSuccess.id]: { ready_status: false },
      [bob.joinSuccess.id]: { ready_status: true },
      [gina.joinSuccess.id]: { ready_status: false },
    });
    for (const client of everyone) {
      expect((await client.next('control', 'joined')).payload).toMatchObject({ id: late.joinSuccess.id, timer: { ready_status: false } });
    }
  });

  it('stops the timer with creator_left when its creator leaves, for the rest', async () => {
    const { alice, bob, gina } = await threeInARoom();
    alice.command('timer', 'start', { kind: 'countdown', duration: 300, enable_ready_check: false });
    const { timer_id } = await sameForAll([alice, bob, gina], 'started');
    await alice.close();
    expect(await sameForAll([bob, gina], 'stopped')).toEqual({ message: 'stopped', timer_id, kind: 'creator_left' });
    await quiet([bob, gina]);
  });

  it('keeps rooms apart: each its own timer, seen only by its participants', async () => {
    const first = await threeInARoom();
    const second = await threeInARoom();
    first.alice.command('timer', 'start', STOPWATCH);
    const { timer_id } = await sameForAll(first.everyone, 'started');
    await quiet(second.everyone);

    second.alice.command('timer', 'start', { kind: 'countdown', duration: 300, enable_ready_check: false });
    expect((await sameForAll(second.everyone, 'started')).timer_id).not.toBe(timer_id);
    second.alice.command('timer', 'stop', { timer_id });
    await quiet([...first.everyone, ...second.everyone]);
  });

  it.runIf(redisUrl)('leaves no key of an ended timer in Redis, whether stopped or ended by its creator leaving', async () => {
    const redis = new Redis(redisUrl!);
    try {
      const { alice, bob, gina, everyone, starters } = await threeInARoom();
      const prefix = `convene:signaling:room:${starters.moderator.roomId}`;
      const timerKeys = async () => (await redis.keys(`${prefix}:timer*`)).sort();
      const readyCheck = { kind: 'countdown', duration: 300, enable_ready_check: true };

      alice.command('timer', 'start', readyCheck);
      let { timer_id } = await sameForAll(everyone, 'started');
      bob.command('timer', 'update_ready_status', { timer_id, status: true });
      await sameForAll(everyone, 'updated_ready_status');
      expect(await timerKeys()).toEqual([`${prefix}:timer`, `${prefix}:timer_ready`]);
      alice.command('timer', 'stop', { timer_id });
      await sameForAll(everyone, 'stopped');
      expect(await timerKeys()).toEqual([]);

      alice.command('timer', 'start', readyCheck);
      ({ timer_id } = await sameForAll(everyone, 'started'));
      gina.command('timer', 'update_ready_status', { timer_id, status: true });
      await sameForAll(everyone, 'updated_ready_status');
      await alice.close();
      await sameForAll([bob, gina], 'stopped');
      expect(await timerKeys()).toEqual([]);
    } finally {
      await redis.quit();
    }
  });
});
