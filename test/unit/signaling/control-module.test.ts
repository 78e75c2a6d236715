/**
 * The control module's own rules through the module tester (the real modules over the in-process
 * bus, fake participants, a fake clock): the display-name rule as the module applies it (whatever
 * the command schema lets through), the room's time limit to the millisecond, and concurrent joins,
 * where each participant's first frame is `join_success` and everyone ends up knowing everyone.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createControlModule } from '../../../src/signaling/modules/control/control.module.js';
import { createModerationModule } from '../../../src/signaling/modules/moderation/moderation.module.js';
import type { ControlModule, SignalingModule } from '../../../src/signaling/modules/module.js';
import type { RoomContext } from '../../../src/signaling/room-context.js';
import { createLocalBus } from '../../../src/signaling/bus/local.js';
import type { SignalingBus } from '../../../src/signaling/bus/signaling-bus.js';
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
        for (let turn = 0; turn < i * 3; turn++) await null;
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

describe('a join held up while another completes', () => {
  it('still gives join_success first, and then the other one as joined', async () => {
    // a module of the room that holds the first joiner's join-time data until the test lets go
    let letGo!: () => void;
    const gate: SignalingModule = {
      namespace: 'gate',
      handleCommand: async () => undefined,
      joinData: (session) => (session.displayName === 'Slow' ? new Promise<undefined>((resolve) => (letGo = () => resolve(undefined))) : Promise.resolve(undefined)),
    };
    await tester.close();
    tester = createModuleTester({ modules: (deps) => [createControlModule(deps), createModerationModule(deps), gate] });
    const base = tester.room();
    const room: RoomContext = { ...base, tariff: { ...base.tariff, enabled_modules: [...base.tariff.enabled_modules, 'gate'] } };
    const [slow, quick] = [tester.participant({ room, displayName: 'Slow' }), tester.participant({ room, displayName: 'Quick' })];

    const slowJoin = joinAsIs(slow, 'Slow');
    await tester.flush();
    expect(tester.payloads(slow)).toEqual([]); // held at the gate, after the member list was read
    await joinAsIs(quick, 'Quick');
    expect(tester.payloads(quick, 'control')).toEqual([expect.objectContaining({ message: 'join_success', participants: [expect.objectContaining({ id: slow.id })] })]);
    expect(tester.payloads(slow)).toEqual([]);

    letGo();
    await slowJoin;
    const events = tester.payloads(slow, 'control');
    expect(events.map((event) => event.message)).toEqual(['join_success', 'joined']);
    expect(events[0]!.participants).toEqual([]);
    expect(events[1]!.id).toBe(quick.id);
  });
});

describe('a joined on its way while the joiner reads the member list', () => {
  it("is not sent to a joiner whose join_success already listed that participant, and a later rejoin is", async () => {
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
    const [alice, bob] = [tester.participant({ displayName: 'Alice' }), tester.participant({ displayName: 'Bob' })];
    await tester.connect(bob);

    held = [];
    await tester.join(alice); // Alice is in the member list; her joined waits on the bus
    await tester.join(bob); // Bob's join_success lists Alice
    const release = held;
    held = undefined;
    for (const publish of release) await publish();
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
