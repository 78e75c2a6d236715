/**
 * The control module's own rules through the module tester (the real modules over the in-process
 * bus, fake participants, a fake clock): the display-name rule as the module applies it (whatever
 * the command schema lets through), the room's time limit to the millisecond, concurrent joins,
 * where each participant's first frame is `join_success` and everyone ends up knowing everyone, no
 * arrival (`joined`, `joined_waiting_room`) told twice to a joiner whose `join_success` listed it,
 * entering the room or its waiting room that changes nothing when the bus fails, and departures
 * that let the modules clean up even then.
 */
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createControlModule } from '../../../src/signaling/modules/control/control.module.js';
import type { MembershipStore } from '../../../src/signaling/room-state/membership-store.js';
import { createLocalMembershipStore } from '../../../src/signaling/room-state/membership.local.js';
import { memberOf } from '../../../src/signaling/room-state/member-records.js';
import { createTimeLimit } from '../../../src/signaling/modules/control/time-limit.js';
import { createModerationModule } from '../../../src/signaling/modules/moderation/moderation.module.js';
import type { ControlModule, SignalingModule } from '../../../src/signaling/modules/module.js';
import type { RoomContext } from '../../../src/signaling/room-context.js';
import { createLocalBus } from '../../../src/signaling/bus/local.js';
import type { RoomMessage, SignalingBus } from '../../../src/signaling/bus/signaling-bus.js';
import { createModuleTester, type FakeSession, type ModuleTester } from '../../support/module-tester.js';

let tester: ModuleTester;
beforeEach(() => {
  tester = createModuleTester();
});
afterEach(async () => {
  await tester.close();
});

/** A room whose tariff has these quotas. */
const roomWith = (quotas: Record<string, number>): RoomContext => {
  const room = tester.room();
  return { ...room, tariff: { ...room.tariff, quotas } };
};

/**
 * `join` straight to the control module, past the command schema: the module's own rule holds
 * whatever the schema lets through.
 */
async function joinAsIs(session: FakeSession, displayName: string) {
  const hub = await tester.connect(session);
  await tester.module('control').handleCommand(session, { action: 'join', display_name: displayName }, hub);
  await tester.flush();
}

describe('the display name', () => {
  it.each([
    ['empty', ''],
    ['spaces only', ' \t '],
    ['101 characters after trimming', `  ${'x'.repeat(101)}  `],
    ['101 characters, some beyond UTF-16', `${'😀'.repeat(50)}${'x'.repeat(51)}`],
  ])('is refused with invalid_username when %s', async (_what, name) => {
    const alice = tester.participant();
    await joinAsIs(alice, name);
    expect(tester.payloads(alice)).toEqual([{ message: 'error', error: 'invalid_username' }]);
    expect(alice.state).toBe('connected');
  });

  it('is trimmed, and takes exactly 100 characters', async () => {
    const alice = tester.participant();
    const name = `${'😀'.repeat(50)}${'x'.repeat(50)}`;
    await joinAsIs(alice, `  ${name}\n`);
    expect(tester.payloads(alice, 'control')).toEqual([expect.objectContaining({ message: 'join_success', display_name: name })]);
  });
});

describe("the room's time limit", () => {
  const T0 = Date.UTC(2026, 4, 4, 9, 29);

  it("closes the room's sessions at closes_at, counted from the first join, and no other room's", async () => {
    const room = roomWith({ room_time_limit_secs: 60 });
    const [alice, bob] = [tester.participant({ room }), tester.participant({ room })];
    const stranger = tester.participant({ room: roomWith({ room_time_limit_secs: 600 }) });
    await tester.join(alice);
    await tester.advance(10_000);
    await tester.join(bob);
    await tester.join(stranger);
    const closesAt = new Date(T0 + 60_000).toISOString();
    expect(tester.payloads(alice, 'control')[0]).toMatchObject({ message: 'join_success', closes_at: closesAt });
    expect(tester.payloads(bob, 'control')[0]).toMatchObject({ message: 'join_success', closes_at: closesAt });

    await tester.advance(50_000 - 1);
    expect([alice.closedWith, bob.closedWith]).toEqual([undefined, undefined]);
    await tester.advance(1);
    expect([alice.closedWith?.code, bob.closedWith?.code]).toEqual([1000, 1000]);
    expect(stranger.closedWith).toBeUndefined();
  });

  it('counts a room that emptied and began again from its new start', async () => {
    const room = roomWith({ room_time_limit_secs: 60 });
    const alice = tester.participant({ room });
    const bob = tester.participant({ room });
    await tester.join(alice);
    await tester.leave(alice);
    await tester.advance(30_000);
    await tester.join(bob);
    expect(tester.payloads(bob, 'control')[0]).toMatchObject({ closes_at: new Date(T0 + 90_000).toISOString() });
    await tester.advance(30_000);
    expect(bob.closedWith).toBeUndefined();
    await tester.advance(30_000);
    expect(bob.closedWith?.code).toBe(1000);
  });

  it('stops watching a room whose last local session left while the time was checked', async () => {
    // the room's start time as a store shows it on a slow day: the read waits until the test lets go
    const membership = createLocalMembershipStore();
    let answer!: () => void;
    const slowly = new Promise<void>((resolve) => (answer = resolve));
    const slowStore: MembershipStore = { ...membership, startedAt: async (roomId) => slowly.then(() => membership.startedAt(roomId)) };
    const limit = createTimeLimit({ scheduler: tester.scheduler, hubs: () => tester.hubs, logger: pino({ level: 'silent' }) }, slowStore);
    const room = roomWith({ room_time_limit_secs: 60 });
    const alice = tester.participant({ room, displayName: 'Alice' });
    alice.joinedAt = new Date(T0).toISOString();
    await tester.connect(alice);
    // the room emptied and began again 30 s later, on another instance: its end moved
    await membership.join(room.roomId, memberOf(alice), undefined, T0 + 30_000);
    limit.arm(room, T0 + 60_000);

    await tester.advance(60_000); // the first end: the check reads the start time
    await tester.hubs.remove(alice); // meanwhile the last local session leaves
    limit.disarm(room.roomId); // as the control module does when the room's hub closes
    answer();
    await tester.flush();
    expect(tester.scheduler.pending).toBe(0);
    expect(alice.closedWith).toBeUndefined();
  });

  it('is absent without the quota', async () => {
    const alice = tester.participant();
    await tester.join(alice);
    expect(tester.payloads(alice, 'control')[0]).toMatchObject({ message: 'join_success', closes_at: null });
    expect(tester.scheduler.pending).toBe(0);
  });
});

describe('concurrent joins', () => {
  it('give everyone join_success first, and every participant knows every other one', async () => {
    const sessions: FakeSession[] = Array.from({ length: 12 }, (_, i) => tester.participant({ displayName: `P${i}` }));
    const hubs = await Promise.all(sessions.map((session) => tester.connect(session)));
    const control = tester.module('control');
    // staggered by a few microtask turns each, so that joins overlap at every stage of one another
    await Promise.all(
      sessions.map(async (session, i) => {
        for (let turn = 0; turn < i * 3; turn++) await Promise.resolve();
        await control.handleCommand(session, { action: 'join', display_name: session.displayName! }, hubs[i]!);
      }),
    );
    await tester.flush();
    for (const session of sessions) {
      const [first, ...rest] = tester.payloads(session, 'control');
      expect(first).toMatchObject({ message: 'join_success' });
      const known = new Set([
        ...(first!.participants as Array<{ id: string }>).map((p) => p.id),
        ...rest.filter((event) => event.message === 'joined').map((event) => event.id as string),
      ]);
      expect(known).toEqual(new Set(sessions.filter((other) => other !== session).map((other) => other.id)));
    }
  });
});

/**
 * A tester whose rooms run a module that holds the join-time data of participants named 'Slow'
 * until the test lets go: their join stops after the room was read, before `join_success`.
 */
async function testerWithGate(options: { bus?: SignalingBus } = {}) {
  let letGo!: () => void;
  const gate: SignalingModule = {
    namespace: 'gate',
    handleCommand: async () => undefined,
    joinData: (session) =>
      session.displayName === 'Slow' ? new Promise<undefined>((resolve) => (letGo = () => resolve(undefined))) : Promise.resolve(undefined),
  };
  await tester.close();
  tester = createModuleTester({ ...options, modules: (deps) => [createControlModule(deps), createModerationModule(deps), gate] });
  const room = (overrides: Partial<RoomContext> = {}): RoomContext => {
    const base = tester.room(overrides);
    return { ...base, tariff: { ...base.tariff, enabled_modules: [...base.tariff.enabled_modules, 'gate'] } };
  };
  return { room, letGo: () => letGo() };
}

describe('a join held up while another completes', () => {
  it('still gives join_success first, and then the other one as joined', async () => {
    const { room: gatedRoom, letGo } = await testerWithGate();
    const room = gatedRoom();
    const [slow, quick] = [tester.participant({ room, displayName: 'Slow' }), tester.participant({ room, displayName: 'Quick' })];

    const slowJoin = joinAsIs(slow, 'Slow');
    await tester.flush();
    expect(tester.payloads(slow)).toEqual([]); // held at the gate, after the member list was read
    await joinAsIs(quick, 'Quick');
    expect(tester.payloads(quick, 'control')).toEqual([
      expect.objectContaining({ message: 'join_success', participants: [expect.objectContaining({ id: slow.id })] }),
    ]);
    expect(tester.payloads(slow)).toEqual([]);

    letGo();
    await slowJoin;
    const events = tester.payloads(slow, 'control');
    expect(events.map((event) => event.message)).toEqual(['join_success', 'joined']);
    expect(events[0]!.participants).toEqual([]);
    expect(events[1]!.id).toBe(quick.id);
  });
});

/** The in-process bus with publishing done by `publish` (which may pass a message on to it, or not yet). */
function busWith(publish: (inner: SignalingBus, roomId: string, message: RoomMessage) => Promise<void>): SignalingBus {
  const inner = createLocalBus();
  return {
    subscribe: (roomId, listener) => inner.subscribe(roomId, listener),
    publish: (roomId, message) => publish(inner, roomId, message),
    close: () => inner.close(),
  };
}

/**
 * A bus that keeps what is published while `holding`, until `letGo` publishes it in order: a
 * message on its way through Redis while the test does something else.
 */
function holdingBus() {
  let held: Array<() => Promise<void>> | undefined;
  const bus = busWith(async (inner, roomId, message) => {
    if (held) held.push(() => inner.publish(roomId, message));
    else await inner.publish(roomId, message);
  });
  return {
    bus,
    hold: () => void (held = []),
    async letGo() {
      const release = held ?? [];
      held = undefined;
      for (const publish of release) await publish();
    },
  };
}

describe('an arrival on its way while the joiner reads who is there', () => {
  it('is not sent to a joiner whose join_success already listed that participant, and a later rejoin is', async () => {
    const { bus, hold, letGo } = holdingBus();
    await tester.close();
    tester = createModuleTester({ bus });
    const [alice, bob] = [tester.participant({ displayName: 'Alice' }), tester.participant({ displayName: 'Bob' })];
    await tester.connect(bob);

    hold();
    await tester.join(alice); // Alice is in the member list; her joined waits on the bus
    await tester.join(bob); // Bob's join_success lists Alice
    await letGo();
    await tester.flush();
    const [success, ...rest] = tester.payloads(bob, 'control');
    expect(success).toMatchObject({ message: 'join_success', participants: [expect.objectContaining({ id: alice.id })] });
    expect(rest).toEqual([]);

    // the same participant coming back is news to Bob
    await tester.leave(alice);
    const again = tester.participant({ resumes: alice, displayName: 'Alice' });
    await tester.join(again);
    expect(tester.payloads(bob, 'control').map((event) => [event.message, event.id])).toEqual([
      ['left', alice.id],
      ['joined', alice.id],
    ]);
  });

  it('is not sent to a joining moderator whose waiting list already named that participant, and a later return is', async () => {
    const { bus, hold, letGo } = holdingBus();
    await tester.close();
    tester = createModuleTester({ bus });
    const room = tester.room({ waitingRoom: true });
    const [mona, max] = [tester.participant({ room, role: 'moderator' }), tester.participant({ room, role: 'moderator' })];
    const gus = tester.participant({ room, kind: 'guest', displayName: 'Gus' });
    await tester.join(mona);
    await tester.connect(max);

    hold();
    await tester.join(gus); // Gus waits; his joined_waiting_room is on its way
    await tester.join(max); // Max's join_success lists Gus as waiting
    await letGo();
    await tester.flush();
    const [success] = tester.payloads(max, 'control');
    expect(success!.moderation).toEqual({
      raise_hands_enabled: true,
      waiting_room_enabled: true,
      waiting_room_participants: [expect.objectContaining({ id: gus.id })],
    });
    expect(tester.payloads(max, 'moderation')).toEqual([]);
    expect(tester.payloads(mona, 'moderation')).toEqual([expect.objectContaining({ message: 'joined_waiting_room', id: gus.id })]);

    // Gus going and coming back is news to Max
    await tester.leave(gus);
    await tester.join(tester.participant({ resumes: gus, displayName: 'Gus' }));
    expect(tester.payloads(max, 'moderation').map((event) => [event.message, event.id])).toEqual([
      ['left_waiting_room', gus.id],
      ['joined_waiting_room', gus.id],
    ]);
  });
});

describe('arrivals reaching a joiner while its join is held up', () => {
  it('are not sent after join_success when it listed them (in the room and in the waiting room)', async () => {
    const { bus, hold, letGo: letBusGo } = holdingBus();
    const { room: gatedRoom, letGo } = await testerWithGate({ bus });
    const room = gatedRoom({ waitingRoom: true });
    const mona = tester.participant({ room, role: 'moderator', displayName: 'Mona' });
    const alice = tester.participant({ room, role: 'moderator', displayName: 'Alice' });
    const gus = tester.participant({ room, kind: 'guest', displayName: 'Gus' });
    const slow = tester.participant({ room, role: 'moderator', displayName: 'Slow' });
    await tester.join(mona);
    tester.payloads(mona); // her join_success

    hold();
    await tester.join(alice); // in the room: her joined is on its way
    await tester.join(gus); // waiting: his joined_waiting_room is on its way
    const slowJoin = joinAsIs(slow, 'Slow'); // reads both, then waits at the gate
    await tester.flush();
    await letBusGo(); // both arrive while Slow's join is held up
    await tester.flush();
    letGo();
    await slowJoin;

    const [success, ...rest] = tester.payloads(slow);
    expect((success!.participants as Array<{ id: string }>).map((p) => p.id).sort()).toEqual([mona.id, alice.id].sort());
    expect(success!.moderation).toEqual({
      raise_hands_enabled: true,
      waiting_room_enabled: true,
      waiting_room_participants: [expect.objectContaining({ id: gus.id })],
    });
    expect(rest).toEqual([]);
    expect(tester.payloads(mona).map((event) => [event.message, event.id])).toEqual([
      ['joined', alice.id],
      ['joined_waiting_room', gus.id],
      ['joined', slow.id],
    ]);
  });
});

/** A bus on which publishing the messages named in `failing` fails, as when Redis is away. */
function failingBus() {
  const failing = new Set<string>();
  const bus = busWith(async (inner, roomId, message) => {
    if (failing.has(message.payload.message)) throw new Error('redis is away');
    await inner.publish(roomId, message);
  });
  return { bus, failing };
}

describe('a join whose joined cannot be published', () => {
  it('gives the place back and tells the joiner nothing but the error, so that it may join again', async () => {
    const { bus, failing } = failingBus();
    await tester.close();
    tester = createModuleTester({ bus });
    const [alice, bob, carl] = [
      tester.participant({ displayName: 'Alice' }),
      tester.participant({ displayName: 'Bob' }),
      tester.participant({ displayName: 'Carl' }),
    ];
    await tester.join(alice);
    tester.payloads(alice);

    failing.add('joined');
    await expect(tester.join(bob)).rejects.toThrow('redis is away');
    expect([tester.payloads(bob), bob.state]).toEqual([[], 'connected']);
    failing.clear();
    await tester.join(carl);
    expect((tester.payloads(carl, 'control')[0]!.participants as Array<{ id: string }>).map((p) => p.id)).toEqual([alice.id]);

    await tester.join(bob);
    expect(tester.payloads(bob, 'control')[0]).toMatchObject({ message: 'join_success', id: bob.id });
    expect(tester.payloads(alice, 'control').map((event) => [event.message, event.id])).toEqual([
      ['joined', carl.id],
      ['joined', bob.id],
    ]);
  });
});

describe('entering the waiting room', () => {
  it('takes the joiner out again and tells it nothing but the error when the moderators cannot be told', async () => {
    const { bus, failing } = failingBus();
    await tester.close();
    tester = createModuleTester({ bus });
    const room = tester.room({ waitingRoom: true });
    const [gus, mona] = [tester.participant({ room, kind: 'guest' }), tester.participant({ room, role: 'moderator' })];

    failing.add('joined_waiting_room');
    await expect(tester.join(gus)).rejects.toThrow('redis is away');
    expect([tester.payloads(gus), gus.state]).toEqual([[], 'connected']);
    failing.clear();
    await tester.join(mona);
    expect(tester.payloads(mona, 'control')[0]!.moderation).toEqual({ raise_hands_enabled: true, waiting_room_enabled: true, waiting_room_participants: [] });

    await tester.join(gus);
    expect(tester.payloads(gus)).toEqual([{ message: 'in_waiting_room' }]);
    expect(tester.payloads(mona, 'moderation')).toEqual([expect.objectContaining({ message: 'joined_waiting_room', id: gus.id })]);
  });

  it('answers in_waiting_room before an accepted that came while the moderators were being told', async () => {
    // a bus on which joined_waiting_room takes its time, as Redis may
    let arrive!: () => void;
    const slow = new Promise<void>((resolve) => (arrive = resolve));
    const bus = busWith(async (inner, roomId, message) => {
      if (message.payload.message === 'joined_waiting_room') await slow;
      await inner.publish(roomId, message);
    });
    await tester.close();
    tester = createModuleTester({ bus });
    const room = tester.room({ waitingRoom: true });
    const [gus, mona] = [tester.participant({ room, kind: 'guest' }), tester.participant({ room, role: 'moderator' })];
    await tester.join(mona);

    const waiting = tester.join(gus);
    await tester.flush();
    await tester.command(mona, 'moderation', { action: 'accept', target: gus.id }); // Mona read Gus in the store
    arrive();
    await waiting;
    expect(tester.payloads(gus)).toEqual([{ message: 'in_waiting_room' }, { message: 'accepted' }]);
    await tester.command(gus, 'control', { action: 'enter_room' });
    expect(tester.payloads(gus, 'control')[0]).toMatchObject({ message: 'join_success', id: gus.id });
  });
});

describe('a departure', () => {
  it("still lets the modules clean up when telling the others failed: the leaver's timer stops", async () => {
    const { bus, failing } = failingBus();
    await tester.close();
    tester = createModuleTester({ bus });
    const [alice, bob] = [tester.participant({ role: 'moderator' }), tester.participant()];
    await tester.join(alice);
    await tester.join(bob);
    await tester.command(alice, 'timer', { action: 'start', kind: 'stopwatch', enable_ready_check: false });
    const [started] = tester.payloads(bob, 'timer');

    failing.add('left');
    await expect(tester.leave(alice)).rejects.toThrow('redis is away');
    await tester.flush();
    expect(tester.payloads(bob, 'timer')).toEqual([{ message: 'stopped', timer_id: started!.timer_id, kind: 'creator_left' }]);
  });
});

describe('publishUpdate', () => {
  it('sends the participant as it is now to the others of the room, and nothing for one not in the room', async () => {
    const [alice, bob] = [tester.participant({ displayName: 'Alice' }), tester.participant({ displayName: 'Bob' })];
    const stranger = tester.participant({ room: tester.room(), displayName: 'Stranger' });
    for (const session of [alice, bob, stranger]) await tester.join(session);
    const [joined] = tester.payloads(alice, 'control').filter((event) => event.message === 'joined');
    tester.payloads(bob);
    tester.payloads(stranger);
    const control = tester.module<ControlModule>('control');

    await control.publishUpdate(bob, tester.hubs.get(bob.room.roomId)!);
    await tester.flush();
    expect(tester.payloads(alice)).toEqual([{ ...joined, message: 'update' }]);
    expect([tester.payloads(bob), tester.payloads(stranger)]).toEqual([[], []]);

    const notJoined = tester.participant();
    await tester.connect(notJoined);
    await control.publishUpdate(notJoined, tester.hubs.get(notJoined.room.roomId)!);
    await tester.flush();
    expect(tester.payloads(alice)).toEqual([]);
  });
});
