/**
 * The timer module (the contract, docs/decisions.md) through the module tester: the real
 * modules over the in-process bus, fake participants and a fake clock, so a countdown's expiry is
 * checked to the millisecond without waiting, also when the store or the bus fails at that moment
 * (through a store and a bus that fail on purpose). Every event a participant gets is checked
 * against the contract by the tester.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLocalBus } from '../../../src/signaling/bus/local.js';
import type { SignalingBus } from '../../../src/signaling/bus/signaling-bus.js';
import { createControlModule } from '../../../src/signaling/modules/control/control.module.js';
import type { CommandPayload, ModuleDeps, SignalingModule } from '../../../src/signaling/modules/module.js';
import type { TimerStore } from '../../../src/signaling/modules/timer/timer-store.js';
import { createLocalTimerStore } from '../../../src/signaling/modules/timer/timer-store.local.js';
import { createTimerModule } from '../../../src/signaling/modules/timer/timer.module.js';
import { createModuleTester, type FakeSession, type ModuleTester } from '../../support/module-tester.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const iso = (ms: number) => new Date(ms).toISOString();

const countdown = (fields: Record<string, unknown> = {}) => ({
  action: 'start',
  kind: 'countdown',
  duration: 60,
  title: 'Research timer',
  style: 'normal',
  enable_ready_check: true,
  ...fields,
});
const stopwatch = (fields: Record<string, unknown> = {}) => ({ action: 'start', kind: 'stopwatch', enable_ready_check: false, ...fields });

let tester: ModuleTester;
let alice: FakeSession; // moderator, starts the timers
let bob: FakeSession; // registered user
let guest: FakeSession;

beforeEach(async () => {
  tester = createModuleTester();
  alice = tester.participant({ role: 'moderator', isRoomOwner: true, displayName: 'Alice' });
  bob = tester.participant({ role: 'user', displayName: 'Bob' });
  guest = tester.participant({ kind: 'guest', displayName: 'Gina' });
  for (const session of [alice, bob, guest]) await tester.join(session);
  for (const session of [alice, bob, guest]) tester.sent(session);
});

afterEach(async () => {
  await tester.close();
});

const everyone = () => [alice, bob, guest];
/** The timer events each of the sessions got since the last look. */
const timerEvents = (sessions: FakeSession[] = everyone()) => sessions.map((session) => tester.payloads(session, 'timer'));

/** Starts a timer as alice and returns its `started` payload, after checking everyone got it. */
async function started(command: CommandPayload = countdown(), by: FakeSession = alice) {
  await tester.command(by, 'timer', command);
  const [mine, ...others] = timerEvents();
  const event = mine![0];
  expect(event).toMatchObject({ message: 'started' });
  for (const got of others) expect(got).toEqual([event]);
  return event as { timer_id: string } & Record<string, unknown>;
}

async function stop(timer_id: string) {
  await tester.command(alice, 'timer', { action: 'stop', timer_id });
  timerEvents();
}

async function expectNoTimerEvents(sessions: FakeSession[] = everyone()) {
  await tester.flush();
  expect(timerEvents(sessions)).toEqual(sessions.map(() => []));
}

/** Whether a timer runs: a moderator's stopwatch start is refused while one does. */
async function timerRuns(): Promise<boolean> {
  await tester.command(alice, 'timer', stopwatch());
  const [event] = timerEvents([alice])[0]!;
  if (event?.message === 'error') return true;
  await tester.command(alice, 'timer', { action: 'stop', timer_id: event!.timer_id });
  timerEvents();
  return false;
}

describe('start', () => {
  it('sends a countdown to every participant, the sender included, with its end', async () => {
    const now = tester.scheduler.now();
    const event = await started();
    expect(event).toStrictEqual({
      message: 'started',
      timer_id: expect.stringMatching(UUID),
      kind: 'countdown',
      started_at: iso(now),
      ends_at: iso(now + 60_000),
      title: 'Research timer',
      style: 'normal',
      ready_check_enabled: true,
    });
  });

  it('sends a stopwatch without an end, ignoring any duration, and omits what was not given', async () => {
    const event = await started(stopwatch({ duration: -1 }));
    expect(event).toStrictEqual({
      message: 'started',
      timer_id: expect.stringMatching(UUID),
      kind: 'stopwatch',
      started_at: iso(tester.scheduler.now()),
      ready_check_enabled: false,
    });
  });

  it('gives every timer its own id', async () => {
    const first = await started(stopwatch());
    await tester.command(alice, 'timer', { action: 'stop', timer_id: first.timer_id });
    timerEvents();
    const second = await started(stopwatch());
    expect(second.timer_id).not.toBe(first.timer_id);
  });

  it.each([
    ['a registered user', () => bob],
    ['a guest', () => guest],
  ])('refuses %s with insufficient_permissions, to the sender only', async (_who, sender) => {
    await tester.command(sender(), 'timer', countdown());
    expect(timerEvents()).toEqual(everyone().map((s) => (s === sender() ? [{ message: 'error', error: 'insufficient_permissions' }] : [])));
    expect(await timerRuns()).toBe(false);
  });

  it('follows the role the session has now, not the one it joined with', async () => {
    bob.role = 'moderator';
    await started(stopwatch(), bob);
    alice.role = 'user';
    await tester.command(alice, 'timer', stopwatch());
    expect(timerEvents([alice])).toEqual([[{ message: 'error', error: 'insufficient_permissions' }]]);
  });

  it.each([
    ['zero', 0],
    ['negative', -1],
    ['fractional', 1.5],
    ['fractional above one', 60.25],
    ['missing', undefined],
    ['beyond the dates JavaScript has', 1e13],
    ['far beyond any date', 1e300],
  ])('refuses a %s countdown duration with invalid_duration', async (_what, duration) => {
    const { duration: _, ...withoutDuration } = countdown();
    await tester.command(alice, 'timer', duration === undefined ? withoutDuration : countdown({ duration }));
    expect(timerEvents()).toEqual([[{ message: 'error', error: 'invalid_duration' }], [], []]);
    expect(await timerRuns()).toBe(false);
  });

  it('takes one second as the shortest countdown', async () => {
    const now = tester.scheduler.now();
    const event = await started(countdown({ duration: 1 }));
    expect(event.ends_at).toBe(iso(now + 1_000));
  });

  it('takes the longest countdown whose end RFC 3339 can still write, and not one second more', async () => {
    const latest = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
    const longest = Math.floor((latest - tester.scheduler.now()) / 1000);
    await tester.command(alice, 'timer', countdown({ duration: longest + 1 }));
    expect(timerEvents([alice])).toEqual([[{ message: 'error', error: 'invalid_duration' }]]);
    const event = await started(countdown({ duration: longest }));
    expect(event.ends_at).toBe(iso(tester.scheduler.now() + longest * 1000));
    expect(event.ends_at).toMatch(/^9999-12-31T23:59:59/);
  });

  it('refuses a second timer with timer_already_running while one runs', async () => {
    const first = await started(stopwatch());
    await tester.command(alice, 'timer', countdown());
    expect(timerEvents()).toEqual([[{ message: 'error', error: 'timer_already_running' }], [], []]);
    await tester.command(alice, 'timer', { action: 'stop', timer_id: first.timer_id });
    timerEvents();
    await started(countdown());
  });

  it('handles a start sent right behind join once the join is done, as the connection runs frames in turn', async () => {
    const carl = tester.participant({ role: 'moderator', displayName: 'Carl' });
    await tester.connect(carl);
    await Promise.all([tester.join(carl), tester.command(carl, 'timer', stopwatch())]);
    expect(tester.payloads(carl).map((event) => event.message)).toEqual(['join_success', 'started']);
  });

  it('checks permission first, then the duration, then the running timer', async () => {
    await started(stopwatch());
    await tester.command(guest, 'timer', countdown({ duration: 0 }));
    expect(timerEvents([guest])).toEqual([[{ message: 'error', error: 'insufficient_permissions' }]]);
    await tester.command(alice, 'timer', countdown({ duration: 0 }));
    expect(timerEvents([alice])).toEqual([[{ message: 'error', error: 'invalid_duration' }]]);
    await tester.command(alice, 'timer', countdown());
    expect(timerEvents([alice])).toEqual([[{ message: 'error', error: 'timer_already_running' }]]);
  });

  it('keeps each room to its own timer and its own participants', async () => {
    const otherRoom = tester.room();
    const dora = tester.participant({ room: otherRoom, role: 'moderator' });
    const emil = tester.participant({ room: otherRoom, kind: 'guest' });
    await tester.join(dora);
    await tester.join(emil);
    for (const session of [dora, emil]) tester.sent(session);

    const here = await started(stopwatch());
    expect(timerEvents([dora, emil])).toEqual([[], []]);
    await tester.command(dora, 'timer', countdown());
    const [there, seenByEmil] = timerEvents([dora, emil]);
    expect(there).toMatchObject([{ message: 'started', kind: 'countdown' }]);
    expect(seenByEmil).toEqual(there);
    await expectNoTimerEvents();

    await tester.command(dora, 'timer', { action: 'stop', timer_id: here.timer_id });
    await expectNoTimerEvents([...everyone(), dora, emil]);
  });
});

describe('stop', () => {
  it('sends stopped by_moderator with the moderator’s id to everyone', async () => {
    const { timer_id } = await started();
    await tester.command(alice, 'timer', { action: 'stop', timer_id });
    const stopped = { message: 'stopped', timer_id, kind: 'by_moderator', participant_id: alice.id };
    expect(timerEvents()).toStrictEqual([[stopped], [stopped], [stopped]]);
    expect(await timerRuns()).toBe(false);
  });

  it('passes the reason on, and lets any moderator stop the timer', async () => {
    const { timer_id } = await started(stopwatch());
    bob.role = 'moderator';
    await tester.command(bob, 'timer', { action: 'stop', timer_id, reason: 'Everyone is done' });
    const stopped = { message: 'stopped', timer_id, kind: 'by_moderator', participant_id: bob.id, reason: 'Everyone is done' };
    expect(timerEvents()).toStrictEqual([[stopped], [stopped], [stopped]]);
  });

  it('refuses a participant who is not a moderator, before looking at the id', async () => {
    const { timer_id } = await started();
    await tester.command(bob, 'timer', { action: 'stop', timer_id });
    await tester.command(guest, 'timer', { action: 'stop', timer_id: randomUUID() });
    expect(timerEvents()).toEqual([[], [{ message: 'error', error: 'insufficient_permissions' }], [{ message: 'error', error: 'insufficient_permissions' }]]);
    expect(await timerRuns()).toBe(true);
  });

  it('ignores an id that is not the running timer’s, without an error', async () => {
    await started();
    await tester.command(alice, 'timer', { action: 'stop', timer_id: randomUUID() });
    await expectNoTimerEvents();
    expect(await timerRuns()).toBe(true);
  });

  it('ignores a stop when no timer runs, and a stop of a timer already stopped', async () => {
    await tester.command(alice, 'timer', { action: 'stop', timer_id: randomUUID() });
    await expectNoTimerEvents();
    const older = await started(stopwatch());
    await tester.command(alice, 'timer', { action: 'stop', timer_id: older.timer_id });
    timerEvents();
    await tester.command(alice, 'timer', { action: 'stop', timer_id: older.timer_id });
    await expectNoTimerEvents();
    const newer = await started(stopwatch());
    await tester.command(alice, 'timer', { action: 'stop', timer_id: older.timer_id });
    await expectNoTimerEvents();
    await tester.command(alice, 'timer', { action: 'stop', timer_id: newer.timer_id });
    expect(timerEvents()[0]).toEqual([{ message: 'stopped', timer_id: newer.timer_id, kind: 'by_moderator', participant_id: alice.id }]);
  });
});

describe('update_ready_status', () => {
  it('sends the new status to everyone, then the participant’s update with it', async () => {
    const { timer_id } = await started(countdown({ enable_ready_check: true }));
    await tester.command(guest, 'timer', { action: 'update_ready_status', timer_id, status: true });
    const updated = { message: 'updated_ready_status', timer_id, participant_id: guest.id, status: true };
    expect(timerEvents()).toStrictEqual([[updated], [updated], [updated]]);
    for (const other of [alice, bob]) {
      const [update] = tester.payloads(other, 'control');
      expect(update).toMatchObject({ message: 'update', id: guest.id, timer: { ready_status: true } });
    }

    await tester.command(guest, 'timer', { action: 'update_ready_status', timer_id, status: false });
    expect(timerEvents()[1]).toEqual([{ ...updated, status: false }]);
    expect(tester.payloads(alice, 'control')).toMatchObject([{ message: 'update', id: guest.id, timer: { ready_status: false } }]);
  });

  it('is ignored when no timer runs, for another timer’s id, and when the ready check is off', async () => {
    const ready = (timer_id: string) => tester.command(bob, 'timer', { action: 'update_ready_status', timer_id, status: true });
    await ready(randomUUID());
    await expectNoTimerEvents();

    const checked = await started(countdown({ enable_ready_check: true }));
    await ready(randomUUID());
    await expectNoTimerEvents();
    await stop(checked.timer_id);
    await ready(checked.timer_id);
    await expectNoTimerEvents();

    const unchecked = await started(countdown({ enable_ready_check: false }));
    await ready(unchecked.timer_id);
    await expectNoTimerEvents();
    expect(tester.payloads(alice, 'control')).toEqual([]);
  });

  it('keeps no status past its timer: the next timer starts with everyone not ready', async () => {
    const first = await started(countdown({ enable_ready_check: true }));
    await tester.command(bob, 'timer', { action: 'update_ready_status', timer_id: first.timer_id, status: true });
    await stop(first.timer_id);
    await started(countdown({ enable_ready_check: true }));
    const peers = await tester.module('timer').peerData!(bob.room.roomId, [bob.id]);
    expect(peers).toEqual(new Map([[bob.id, { ready_status: false }]]));
  });
});

describe('expiry', () => {
  it('expires a countdown at its end exactly, once, for everyone', async () => {
    const { timer_id, ends_at } = await started(countdown({ duration: 60 }));
    await tester.advance(59_999);
    await expectNoTimerEvents();
    await tester.advance(1);
    const expired = { message: 'stopped', timer_id, kind: 'expired' };
    const frames = everyone().map((session) => tester.sent(session, 'timer'));
    for (const got of frames) {
      expect(got.map((frame) => frame.payload)).toStrictEqual([expired]);
      expect(got[0]!.timestamp).toBe(ends_at);
    }
    await tester.advance(3_600_000);
    await expectNoTimerEvents();
    expect(await timerRuns()).toBe(false);
  });

  it('never expires a stopwatch', async () => {
    await started(stopwatch());
    expect(tester.scheduler.pending).toBe(0);
    await tester.advance(7 * 24 * 3_600_000);
    await expectNoTimerEvents();
    expect(await timerRuns()).toBe(true);
  });

  it('does not expire a countdown that was stopped, nor the timer that followed it', async () => {
    const older = await started(countdown({ duration: 60 }));
    await stop(older.timer_id);
    expect(tester.scheduler.pending).toBe(0);
    const newer = await started(countdown({ duration: 120 }));
    await tester.advance(60_000);
    await expectNoTimerEvents();
    await tester.advance(60_000);
    expect(timerEvents()).toEqual(everyone().map(() => [{ message: 'stopped', timer_id: newer.timer_id, kind: 'expired' }]));
  });

  it('leaves the timer that followed alone when a stale expiry fires', async () => {
    // a join reads the store while the bus delivers: a read from before the stop arms the older
    // countdown beside the newer one, as this late `started` does
    const older = await started(countdown({ duration: 60 }));
    const timer = tester.module('timer');
    const hub = tester.hubs.get(alice.room.roomId)!;
    await stop(older.timer_id);
    const newer = await started(countdown({ duration: 120 }));
    await timer.onHubEvent!({ type: 'message', hub, message: { namespace: 'timer', payload: { ...older, message: 'started' }, audience: { to: 'room' } } });
    expect(tester.scheduler.pending).toBe(2);
    await tester.advance(60_000);
    await expectNoTimerEvents();
    expect(await timerRuns()).toBe(true);
    await tester.advance(60_000);
    expect(timerEvents()[1]).toEqual([{ message: 'stopped', timer_id: newer.timer_id, kind: 'expired' }]);
  });
});

describe('expiry when the store or the bus fails', () => {
  let failingTakes: number;
  let failingStoppedPublishes: number;
  let takes: number;
  const unreachable = () => Promise.reject(new Error('Redis is unreachable'));

  beforeEach(async () => {
    await tester.close();
    [failingTakes, failingStoppedPublishes, takes] = [0, 0, 0];
    const inner = createLocalTimerStore();
    const store: TimerStore = {
      ...inner,
      take(roomId, timerId) {
        takes++;
        return failingTakes-- > 0 ? unreachable() : inner.take(roomId, timerId);
      },
    };
    const local = createLocalBus();
    const bus: SignalingBus = {
      ...local,
      publish: (roomId, message) => (message.payload.message === 'stopped' && failingStoppedPublishes-- > 0 ? unreachable() : local.publish(roomId, message)),
    };
    tester = createModuleTester({ bus, stores: { timer: store }, modules: (deps: ModuleDeps) => [createControlModule(deps), createTimerModule(deps)] });
    alice = tester.participant({ role: 'moderator', displayName: 'Alice' });
    bob = tester.participant({ displayName: 'Bob' });
    guest = tester.participant({ kind: 'guest', displayName: 'Gina' });
    for (const session of everyone()) await tester.join(session);
    for (const session of everyone()) tester.sent(session);
  });

  it('takes the countdown again a second after a failed take, and expires it once', async () => {
    failingTakes = 1;
    const { timer_id } = await started(countdown({ duration: 60 }));
    await tester.advance(60_000);
    await expectNoTimerEvents();
    expect(tester.scheduler.pending).toBe(1);
    await tester.advance(999);
    await expectNoTimerEvents();
    await tester.advance(1);
    expect(timerEvents()).toEqual(everyone().map(() => [{ message: 'stopped', timer_id, kind: 'expired' }]));
    await tester.advance(3_600_000);
    await expectNoTimerEvents();
  });

  it('publishes expired again, without taking again, after the bus failed', async () => {
    failingStoppedPublishes = 1;
    const { timer_id } = await started(countdown({ duration: 60 }));
    await tester.advance(60_000);
    await expectNoTimerEvents();
    await tester.advance(1_000);
    expect(timerEvents()).toEqual(everyone().map(() => [{ message: 'stopped', timer_id, kind: 'expired' }]));
    expect(takes).toBe(1);
  });

  it('gives up after its retries; the next participant to join arms the countdown again', async () => {
    failingTakes = 4;
    const { timer_id } = await started(countdown({ duration: 60 }));
    await tester.advance(60_000 + 1_000 + 10_000 + 60_000);
    expect(takes).toBe(4);
    expect(tester.scheduler.pending).toBe(0);
    await expectNoTimerEvents();

    const carl = tester.participant({ displayName: 'Carl' });
    await tester.join(carl);
    expect(tester.payloads(carl, 'control')[0]).toMatchObject({ message: 'join_success', timer: { timer_id } });
    expect(timerEvents([...everyone(), carl])).toEqual([...everyone(), carl].map(() => [{ message: 'stopped', timer_id, kind: 'expired' }]));
  });

  it('stops trying when the room’s last participant here leaves', async () => {
    failingTakes = 1;
    await started(countdown({ duration: 60, enable_ready_check: false }));
    await tester.advance(60_000);
    expect(tester.scheduler.pending).toBe(1);
    for (const session of [bob, guest, alice]) await tester.leave(session);
    expect(tester.scheduler.pending).toBe(0);
  });
});

describe('departures', () => {
  it('arms nothing on a hub that has closed, for a started still on its way to it', async () => {
    const hub = tester.hubs.get(alice.room.roomId)!;
    for (const session of everyone()) await tester.leave(session);
    const now = tester.scheduler.now();
    const late = {
      message: 'started',
      timer_id: randomUUID(),
      kind: 'countdown',
      started_at: iso(now),
      ends_at: iso(now + 60_000),
      ready_check_enabled: false,
    };
    await tester.module('timer').onHubEvent!({ type: 'message', hub, message: { namespace: 'timer', payload: late, audience: { to: 'room' } } });
    expect(tester.scheduler.pending).toBe(0);
  });

  it('stops the timer with creator_left when its creator leaves, for the others', async () => {
    const { timer_id } = await started(countdown());
    await tester.leave(alice);
    expect(timerEvents()).toStrictEqual([
      [], // its socket is closed
      [{ message: 'stopped', timer_id, kind: 'creator_left' }],
      [{ message: 'stopped', timer_id, kind: 'creator_left' }],
    ]);
    expect(tester.scheduler.pending).toBe(0);
    await tester.advance(60_000);
    await expectNoTimerEvents([bob, guest]);
    bob.role = 'moderator';
    await tester.command(bob, 'timer', stopwatch());
    expect(timerEvents([bob, guest])).toMatchObject([[{ message: 'started' }], [{ message: 'started' }]]);
  });

  it('keeps the timer running when anyone else leaves, and forgets the leaver’s status', async () => {
    const { timer_id } = await started(countdown({ enable_ready_check: true }));
    await tester.command(bob, 'timer', { action: 'update_ready_status', timer_id, status: true });
    timerEvents();
    await tester.leave(bob);
    await expectNoTimerEvents([alice, guest]);
    expect(await timerRuns()).toBe(true);

    const bobAgain = tester.participant({ resumes: bob });
    await tester.join(bobAgain);
    const [joinSuccess] = tester.payloads(bobAgain, 'control');
    expect(joinSuccess).toMatchObject({ message: 'join_success', timer: { timer_id, ready_status: false } });
  });

  it('stops the timer its creator started as its socket closed', async () => {
    // the connection lets the command in progress finish before the departure
    const starting = tester.command(alice, 'timer', countdown());
    await Promise.resolve(); // the command has begun
    await Promise.all([starting, tester.leave(alice)]);
    const events = tester.payloads(bob, 'timer');
    expect(events).toEqual([expect.objectContaining({ message: 'started' }), { message: 'stopped', timer_id: events[0]!.timer_id, kind: 'creator_left' }]);
    expect(tester.scheduler.pending).toBe(0);
  });

  it('takes only the leaver’s own timer, even from a room just emptied (a newcomer may have started one)', async () => {
    const { timer_id } = await started(stopwatch());
    const timer = tester.module('timer');
    await timer.participantLeft!(bob, tester.hubs.get(bob.room.roomId)!, { roomEmpty: true });
    await expectNoTimerEvents();
    await tester.command(alice, 'timer', { action: 'stop', timer_id });
    expect(timerEvents()[1]).toEqual([{ message: 'stopped', timer_id, kind: 'by_moderator', participant_id: alice.id }]);
  });

  it('ends with the room closed at its time limit: the sockets closed, everyone departed', async () => {
    const base = tester.room();
    const room = { ...base, tariff: { ...base.tariff, quotas: { room_time_limit_secs: 60 } } };
    const [mona, ned] = [tester.participant({ room, role: 'moderator' }), tester.participant({ room })];
    for (const session of [mona, ned]) await tester.join(session);
    await tester.command(mona, 'timer', countdown({ duration: 3_600 }));
    await tester.advance(60_000);
    expect([mona.closedWith?.code, ned.closedWith?.code]).toEqual([1000, 1000]);
    expect(tester.scheduler.pending).toBe(0);

    const olga = tester.participant({ room });
    await tester.join(olga);
    expect(tester.payloads(olga, 'control')[0]).not.toHaveProperty('timer');
  });

  it('ends the timer with the room: the next participant finds none', async () => {
    await started(countdown({ duration: 60 }));
    for (const session of [bob, guest, alice]) await tester.leave(session);
    expect(timerEvents()).toEqual([[], [], []]);
    expect(tester.scheduler.pending).toBe(0);

    const dora = tester.participant({ room: alice.room, role: 'moderator' });
    await tester.join(dora);
    const [joinSuccess] = tester.payloads(dora, 'control');
    expect(joinSuccess).toMatchObject({ message: 'join_success' });
    expect(joinSuccess).not.toHaveProperty('timer');
    await tester.command(dora, 'timer', stopwatch());
    expect(timerEvents([dora])[0]).toMatchObject([{ message: 'started' }]);
  });
});

describe('a started on its way while someone joins', () => {
  it("is not sent to a joiner whose join_success already showed that timer; the next timer's is", async () => {
    // a bus that holds published messages until the test lets them go, as Redis may while a join runs
    const inner = createLocalBus();
    let held: Array<() => Promise<void>> | undefined;
    const bus: SignalingBus = {
      subscribe: (roomId, listener) => inner.subscribe(roomId, listener),
      publish: (roomId, message) => (held ? (held.push(() => inner.publish(roomId, message)), Promise.resolve()) : inner.publish(roomId, message)),
      close: () => inner.close(),
    };
    await tester.close();
    tester = createModuleTester({ bus });
    const mod = tester.participant({ role: 'moderator', isRoomOwner: true, displayName: 'Mod' });
    const late = tester.participant({ displayName: 'Late' });
    await tester.join(mod);
    await tester.connect(late);

    held = [];
    await tester.command(mod, 'timer', stopwatch()); // the timer exists; its started waits on the bus
    await tester.join(late);
    const release = held;
    held = undefined;
    for (const publish of release) await publish();
    await tester.flush();
    const [success] = tester.payloads(late, 'control');
    const shown = (success!.timer as { timer_id: string }).timer_id;
    expect(tester.payloads(late, 'timer')).toEqual([]);
    const [started] = tester.payloads(mod, 'timer');
    expect(started).toMatchObject({ message: 'started', timer_id: shown });

    await tester.command(mod, 'timer', { action: 'stop', timer_id: shown });
    await tester.command(mod, 'timer', stopwatch());
    expect(tester.payloads(late, 'timer').map((event) => event.message)).toEqual(['stopped', 'started']);
  });

  // found by the soak (test/soak/soak.test.ts) on Redis: guests joining as a run ended got its stopped
  it("sends no stopped of a timer that ended before the join's read to a joiner shown no timer; the next timer's events it gets", async () => {
    const inner = createLocalBus();
    let held: Array<() => Promise<void>> | undefined;
    const bus: SignalingBus = {
      subscribe: (roomId, listener) => inner.subscribe(roomId, listener),
      publish: (roomId, message) => (held ? (held.push(() => inner.publish(roomId, message)), Promise.resolve()) : inner.publish(roomId, message)),
      close: () => inner.close(),
    };
    await tester.close();
    tester = createModuleTester({ bus });
    const mod = tester.participant({ role: 'moderator', isRoomOwner: true, displayName: 'Mod' });
    const late = tester.participant({ displayName: 'Late' });
    await tester.join(mod);
    await tester.connect(late);
    await tester.command(mod, 'timer', stopwatch());
    const [{ timer_id: ended }] = tester.payloads(mod, 'timer') as [{ timer_id: string }];

    held = [];
    await tester.command(mod, 'timer', { action: 'stop', timer_id: ended }); // taken; its stopped waits on the bus
    await tester.join(late);
    const release = held;
    held = undefined;
    for (const publish of release) await publish();
    await tester.flush();
    expect(tester.payloads(late, 'control')[0]).not.toHaveProperty('timer');
    expect(tester.payloads(mod, 'timer')).toMatchObject([{ message: 'stopped', timer_id: ended }]);
    expect(tester.payloads(late, 'timer')).toEqual([]);

    await tester.command(mod, 'timer', stopwatch());
    const [{ timer_id: next }] = tester.payloads(mod, 'timer') as [{ timer_id: string }];
    await tester.command(mod, 'timer', { action: 'stop', timer_id: next });
    expect(tester.payloads(late, 'timer')).toMatchObject([
      { message: 'started', timer_id: next },
      { message: 'stopped', timer_id: next },
    ]);
  });
});

describe('join-time data', () => {
  it('gives a joiner the running countdown with its own status, and each participant’s status', async () => {
    const { message: _, ...timer } = await started(countdown({ enable_ready_check: true }));
    await tester.command(guest, 'timer', { action: 'update_ready_status', timer_id: timer.timer_id, status: true });
    timerEvents();
    for (const session of everyone()) tester.sent(session, 'control');

    const carl = tester.participant({ displayName: 'Carl' });
    await tester.join(carl);
    const [joinSuccess] = tester.payloads(carl, 'control') as [{ timer: unknown; participants: { id: string; timer?: unknown }[] }];
    expect(joinSuccess.timer).toStrictEqual({ ...timer, ready_status: false });
    const statusOf = Object.fromEntries(joinSuccess.participants.map((p) => [p.id, p.timer]));
    expect(statusOf).toEqual({
      [alice.id]: { ready_status: false },
      [bob.id]: { ready_status: false },
      [guest.id]: { ready_status: true },
    });
    for (const other of everyone()) {
      expect(tester.payloads(other, 'control')).toMatchObject([{ message: 'joined', id: carl.id, timer: { ready_status: false } }]);
    }
  });

  it('gives a joiner the running timer without ready statuses when its ready check is off', async () => {
    const { message: _, ...timer } = await started(stopwatch({ title: 'Break', style: 'coffee-break' }));
    const carl = tester.participant();
    await tester.join(carl);
    const [joinSuccess] = tester.payloads(carl, 'control') as [{ timer: unknown; participants: object[] }];
    expect(joinSuccess.timer).toStrictEqual(timer);
    for (const participant of joinSuccess.participants) expect(participant).not.toHaveProperty('timer');
    expect(tester.payloads(alice, 'control')[0]).not.toHaveProperty('timer');
  });

  it('gives nothing while no timer runs', async () => {
    const timer = tester.module('timer');
    expect(await timer.joinData!(bob, tester.hubs.get(bob.room.roomId)!)).toBeUndefined();
    expect(await timer.peerData!(bob.room.roomId, [alice.id, bob.id])).toEqual(new Map());
  });

  it('gives peer data only for the ids asked, defaulting to not ready', async () => {
    const { timer_id } = await started(countdown({ enable_ready_check: true }));
    await tester.command(bob, 'timer', { action: 'update_ready_status', timer_id, status: true });
    const stranger = randomUUID();
    expect(await tester.module('timer').peerData!(bob.room.roomId, [bob.id, stranger])).toEqual(
      new Map([
        [bob.id, { ready_status: true }],
        [stranger, { ready_status: false }],
      ]),
    );
  });
});

describe('two instances over one store', () => {
  const timerOnly = (deps: Parameters<typeof createTimerModule>[0]): SignalingModule[] => [createTimerModule(deps)];
  let store: ReturnType<typeof createLocalTimerStore>;
  let second: ModuleTester;

  beforeEach(async () => {
    await tester.close();
    store = createLocalTimerStore();
    tester = createModuleTester({ modules: timerOnly, stores: { timer: store } });
    second = tester.sibling({ modules: timerOnly, stores: { timer: store } });
    alice = tester.participant({ role: 'moderator' });
    bob = second.participant({ room: alice.room });
    guest = second.participant({ room: alice.room, kind: 'guest' });
    await tester.join(alice);
    for (const session of [bob, guest]) await second.join(session);
  });

  afterEach(async () => {
    await second.close();
  });

  it('arms the countdown on both and sends expired once, from whichever takes it', async () => {
    const { timer_id } = await started(countdown({ duration: 30 }));
    expect(tester.scheduler.pending).toBe(2);
    await tester.advance(30_000);
    expect(timerEvents()).toEqual(everyone().map(() => [{ message: 'stopped', timer_id, kind: 'expired' }]));
    expect(tester.scheduler.pending).toBe(0);
  });

  it('arms a running countdown when an instance gets its first participant of the room', async () => {
    const { timer_id } = await started(countdown({ duration: 30 }));
    const third = tester.sibling({ modules: timerOnly, stores: { timer: store } });
    const carl = third.participant({ room: alice.room });
    await third.join(carl);
    expect(tester.scheduler.pending).toBe(3);
    // the first two instances shut down without a word: the third expires the countdown
    for (const instance of [tester, second]) for (const module of instance.modules.values()) await module.close?.();
    expect(tester.scheduler.pending).toBe(1);
    await third.advance(30_000);
    expect(timerEvents([...everyone(), carl])).toEqual([...everyone(), carl].map(() => [{ message: 'stopped', timer_id, kind: 'expired' }]));
    await third.close();
  });

  it('expires at once a countdown whose end passed while no instance had it armed', async () => {
    const { timer_id } = await started(countdown({ duration: 30 }));
    // both instances shut down without a word; their sessions stay, as after a crash
    for (const instance of [tester, second]) for (const module of instance.modules.values()) await module.close?.();
    await tester.advance(60_000);
    await expectNoTimerEvents();
    const third = tester.sibling({ modules: timerOnly, stores: { timer: store } });
    const carl = third.participant({ room: alice.room });
    await third.join(carl);
    expect(timerEvents([...everyone(), carl])).toEqual([...everyone(), carl].map(() => [{ message: 'stopped', timer_id, kind: 'expired' }]));
    await third.close();
  });

  it('disarms an instance whose last participant of the room left', async () => {
    await started(countdown({ duration: 30 }));
    await second.leave(bob);
    expect(tester.scheduler.pending).toBe(2);
    await second.leave(guest);
    expect(tester.scheduler.pending).toBe(1);
    expect(await timerRuns()).toBe(true);
  });

  it('tells the participants on every instance that the creator left', async () => {
    const { timer_id } = await started(countdown({ duration: 30 }));
    await tester.leave(alice);
    expect(timerEvents([bob, guest])).toEqual([bob, guest].map(() => [{ message: 'stopped', timer_id, kind: 'creator_left' }]));
    expect(tester.scheduler.pending).toBe(0);
  });
});
