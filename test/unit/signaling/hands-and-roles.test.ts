/**
 * Raised hands and the moderator role (the `control` commands `raise_hand`, `lower_hand`,
 * `grant_moderator_role`, `revoke_moderator_role`, and the moderation module's hand switches and
 * reset) through the module tester: the real modules over the in-process bus and fake participants.
 * Who may do what, the events each participant gets (checked against the contract by the tester),
 * the membership store learning each change (a later joiner's `join_success` lists it), and a new
 * role taking effect where the role matters: the timer's and the moderation module's permissions,
 * and the moderators' waiting-room events.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RoomContext } from '../../../src/signaling/room-context.js';
import { createModuleTester, type FakeSession, type ModuleTester, type ParticipantOptions } from '../../support/module-tester.js';

const T0 = Date.UTC(2026, 4, 4, 9, 29);
const iso = (ms: number) => new Date(ms).toISOString();

let tester: ModuleTester;
beforeEach(() => {
  tester = createModuleTester();
});
afterEach(async () => {
  await tester.close();
});

/** Joins a participant of the room (the default one unless given) and drops what it was sent. */
async function joined(displayName: string, options: ParticipantOptions = {}): Promise<FakeSession> {
  const session = tester.participant({ displayName, ...options });
  await tester.join(session);
  tester.sent(session);
  return session;
}

/** Owner Alice, user Ulla and guest Gus in one room, each having seen the others join. */
async function trio(room?: RoomContext) {
  const alice = await joined('Alice', { role: 'moderator', isRoomOwner: true, ...(room ? { room } : {}) });
  const ulla = await joined('Ulla', { role: 'user', ...(room ? { room } : {}) });
  const gus = await joined('Gus', { kind: 'guest', ...(room ? { room } : {}) });
  for (const session of [alice, ulla, gus]) tester.sent(session);
  return { alice, ulla, gus };
}

const control = (session: FakeSession, payload: Record<string, unknown> & { action: string }) => tester.command(session, 'control', payload);
const moderation = (session: FakeSession, payload: Record<string, unknown> & { action: string }) => tester.command(session, 'moderation', payload);

/** The `control` `update`s a session got since the last look: [participant id, what the test picks]. */
function updates<T>(session: FakeSession, pick: (control: Record<string, unknown>) => T): Array<[string, T]> {
  return tester
    .payloads(session, 'control')
    .filter((event) => event.message === 'update')
    .map((event) => [event.id as string, pick(event.control as Record<string, unknown>)]);
}
const hand = (control: Record<string, unknown>) => [control.hand_is_up, control.hand_updated_at];
const role = (control: Record<string, unknown>) => control.role;

/** The control data a later joiner's `join_success` lists for a participant. */
async function listedBy(latecomer: FakeSession, id: string) {
  await tester.join(latecomer);
  const [success] = tester.payloads(latecomer, 'control');
  return (success!.participants as Array<{ id: string; control: Record<string, unknown> }>).find((p) => p.id === id)!.control;
}

describe('raise_hand and lower_hand', () => {
  it('tell the others each change (update with hand_is_up and its time), and the sender nothing', async () => {
    const { alice, ulla, gus } = await trio();
    await tester.advance(5_000);
    await control(ulla, { action: 'raise_hand' });
    for (const other of [alice, gus]) expect(updates(other, hand)).toEqual([[ulla.id, [true, iso(T0 + 5_000)]]]);
    expect(tester.payloads(ulla)).toEqual([]);

    await tester.advance(5_000);
    await control(ulla, { action: 'lower_hand' });
    for (const other of [alice, gus]) expect(updates(other, hand)).toEqual([[ulla.id, [false, iso(T0 + 10_000)]]]);
    expect(tester.payloads(ulla)).toEqual([]);
  });

  it('change nothing and tell nobody when the hand is where it is asked to be', async () => {
    const { alice, ulla } = await trio();
    await control(ulla, { action: 'lower_hand' });
    await control(ulla, { action: 'raise_hand' });
    await control(ulla, { action: 'raise_hand' });
    expect(updates(alice, hand)).toEqual([[ulla.id, [true, iso(T0)]]]);
    expect(tester.payloads(ulla)).toEqual([]);
  });

  it("are in the membership store: a later joiner's join_success lists the hand as it is", async () => {
    const { ulla } = await trio();
    await tester.advance(1_000);
    await control(ulla, { action: 'raise_hand' });
    expect(await listedBy(tester.participant({ displayName: 'Late' }), ulla.id)).toMatchObject({
      hand_is_up: true,
      hand_updated_at: iso(T0 + 1_000),
      joined_at: iso(T0),
    });
    await control(ulla, { action: 'lower_hand' });
    expect(await listedBy(tester.participant({ displayName: 'Later' }), ulla.id)).toMatchObject({ hand_is_up: false, hand_updated_at: iso(T0 + 1_000) });
  });

  it('are refused with not_yet_joined in the waiting room', async () => {
    const room = tester.room({ waitingRoom: true });
    const gus = tester.participant({ room, kind: 'guest', displayName: 'Gus' });
    await tester.join(gus);
    expect(tester.payloads(gus)).toEqual([{ message: 'in_waiting_room' }]);
    for (const action of ['raise_hand', 'lower_hand']) {
      await control(gus, { action });
      expect(tester.payloads(gus)).toEqual([{ message: 'error', error: 'not_yet_joined' }]);
    }
  });

  it('go down when the participant leaves the room, and come back down when it enters again', async () => {
    const { alice, ulla } = await trio();
    await control(ulla, { action: 'raise_hand' });
    await tester.leave(ulla);
    tester.sent(alice);
    const again = tester.participant({ resumes: ulla, displayName: 'Ulla' });
    await tester.join(again);
    const [joinedAgain] = tester.payloads(alice, 'control');
    expect(joinedAgain).toMatchObject({ message: 'joined', id: ulla.id, control: { hand_is_up: false } });
  });
});

describe('a moderator and raised hands', () => {
  it('disable_raise_hands lowers every raised hand and refuses raise_hand until enable_raise_hands', async () => {
    const { alice, ulla, gus } = await trio();
    await control(ulla, { action: 'raise_hand' });
    await control(gus, { action: 'raise_hand' });
    tester.sent(alice);

    await moderation(alice, { action: 'disable_raise_hands' });
    for (const session of [alice, ulla, gus]) {
      expect(tester.payloads(session, 'moderation')).toEqual([{ message: 'raise_hands_disabled', issued_by: alice.id }]);
    }
    expect(updates(alice, hand).sort()).toEqual(
      [
        [gus.id, [false, iso(T0)]],
        [ulla.id, [false, iso(T0)]],
      ].sort(),
    );
    for (const session of [ulla, gus]) tester.sent(session);
    await control(ulla, { action: 'raise_hand' });
    expect(tester.payloads(ulla)).toEqual([{ message: 'error', error: 'raise_hands_disabled' }]);
    await control(ulla, { action: 'lower_hand' }); // lowering is never refused (and here changes nothing)
    expect(tester.payloads(ulla)).toEqual([]);
    // a newcomer learns it at once
    const late = tester.participant({ displayName: 'Late' });
    await tester.join(late);
    expect(tester.payloads(late, 'control')[0]!.moderation).toEqual({ raise_hands_enabled: false });

    await moderation(alice, { action: 'enable_raise_hands' });
    for (const session of [alice, ulla, gus, late]) {
      expect(tester.payloads(session, 'moderation')).toEqual([{ message: 'raise_hands_enabled', issued_by: alice.id }]);
    }
    await control(ulla, { action: 'raise_hand' });
    expect(updates(alice, hand)).toEqual([[ulla.id, [true, iso(T0)]]]);
  });

  it('disabling also lowers a hand whose raise was under way', async () => {
    const { alice, ulla } = await trio();
    const raising = control(ulla, { action: 'raise_hand' }); // read "enabled" before the switch
    await moderation(alice, { action: 'disable_raise_hands' });
    await raising;
    await tester.flush();
    expect(updates(alice, hand).map(([, [up]]) => up)).toEqual([true, false]);
    expect(await listedBy(tester.participant({ displayName: 'Late' }), ulla.id)).toMatchObject({ hand_is_up: false });
  });

  it('are forgotten when the room empties: its next session allows raised hands', async () => {
    const alice = await joined('Alice', { role: 'moderator', isRoomOwner: true });
    await moderation(alice, { action: 'disable_raise_hands' });
    await tester.leave(alice);
    const ulla = await joined('Ulla', { role: 'user' });
    await control(ulla, { action: 'raise_hand' });
    expect(tester.payloads(ulla)).toEqual([]);
  });

  it("reset_raised_hands lowers everyone's hand and tells everyone", async () => {
    const { alice, ulla, gus } = await trio();
    await control(ulla, { action: 'raise_hand' });
    await control(alice, { action: 'raise_hand' });
    tester.sent(gus);
    await tester.advance(1_000);
    await moderation(alice, { action: 'reset_raised_hands' });
    for (const session of [alice, ulla, gus]) {
      expect(tester.payloads(session, 'moderation')).toEqual([{ message: 'raised_hand_reset_by_moderator', issued_by: alice.id }]);
    }
    expect(updates(gus, hand).sort()).toEqual(
      [
        [alice.id, [false, iso(T0 + 1_000)]],
        [ulla.id, [false, iso(T0 + 1_000)]],
      ].sort(),
    );
    // raising stays allowed
    await control(ulla, { action: 'raise_hand' });
    expect(updates(gus, hand)).toEqual([[ulla.id, [true, iso(T0 + 1_000)]]]);
  });

  it('reset_raised_hands with targets lowers and tells those alone; ids not in the room are ignored', async () => {
    const { alice, ulla, gus } = await trio();
    await control(ulla, { action: 'raise_hand' });
    await control(gus, { action: 'raise_hand' });
    tester.sent(alice);

    await moderation(alice, { action: 'reset_raised_hands', target: ulla.id });
    expect(tester.payloads(ulla, 'moderation')).toEqual([{ message: 'raised_hand_reset_by_moderator', issued_by: alice.id }]);
    expect([tester.payloads(gus, 'moderation'), tester.payloads(alice, 'moderation')]).toEqual([[], []]);
    expect(updates(alice, hand)).toEqual([[ulla.id, [false, iso(T0)]]]);

    await control(ulla, { action: 'raise_hand' });
    tester.sent(alice);
    await moderation(alice, { action: 'reset_raised_hands', target: [gus.id, randomUUID(), gus.id, ulla.id] });
    for (const session of [ulla, gus]) {
      expect(tester.payloads(session, 'moderation')).toEqual([{ message: 'raised_hand_reset_by_moderator', issued_by: alice.id }]);
    }
    expect(updates(alice, hand).sort()).toEqual(
      [
        [gus.id, [false, iso(T0)]],
        [ulla.id, [false, iso(T0)]],
      ].sort(),
    );
  });

  it.each([
    ['reset_raised_hands', {}],
    ['enable_raise_hands', {}],
    ['disable_raise_hands', {}],
  ])('%s is for moderators only', async (action, fields) => {
    const { alice, ulla, gus } = await trio();
    await control(gus, { action: 'raise_hand' });
    for (const session of [ulla, gus]) {
      await moderation(session, { action, ...fields });
      expect(tester.payloads(session, 'moderation')).toEqual([{ message: 'error', error: 'insufficient_permissions' }]);
    }
    await tester.flush();
    expect(tester.payloads(alice, 'moderation')).toEqual([]);
    expect(updates(alice, hand)).toEqual([[gus.id, [true, iso(T0)]]]);
  });

  it('need no moderation module: without it in the tariff hands are always allowed, and join_success has no moderation key', async () => {
    const room = tester.room();
    const unmoderated: RoomContext = { ...room, tariff: { ...room.tariff, enabled_modules: room.tariff.enabled_modules.filter((id) => id !== 'moderation') } };
    const alice = tester.participant({ room: unmoderated, role: 'moderator', isRoomOwner: true, displayName: 'Alice' });
    await tester.join(alice);
    expect(tester.payloads(alice, 'control')[0]).not.toHaveProperty('moderation');
    const ulla = await joined('Ulla', { room: unmoderated });
    tester.sent(alice);
    await control(ulla, { action: 'raise_hand' });
    expect(updates(alice, hand)).toEqual([[ulla.id, [true, iso(T0)]]]);
  });
});

describe('grant_moderator_role and revoke_moderator_role', () => {
  it('give the target its new role (role_updated), the others an update, and later joiners the role', async () => {
    const { alice, ulla, gus } = await trio();
    await control(alice, { action: 'grant_moderator_role', target: gus.id });
    expect(tester.payloads(gus, 'control')).toEqual([{ message: 'role_updated', new_role: 'moderator' }]);
    for (const other of [alice, ulla]) expect(updates(other, role)).toEqual([[gus.id, 'moderator']]);
    expect(gus.role).toBe('moderator');
    expect(await listedBy(tester.participant({ displayName: 'Late' }), gus.id)).toMatchObject({ role: 'moderator', participation_kind: 'guest' });
    for (const session of [alice, ulla, gus]) tester.sent(session);

    // a guest falls back to guest, a user to user; a new moderator may revoke, itself too
    await control(gus, { action: 'revoke_moderator_role', target: gus.id });
    expect(tester.payloads(gus, 'control')).toEqual([{ message: 'role_updated', new_role: 'guest' }]);
    expect(updates(ulla, role)).toEqual([[gus.id, 'guest']]);
    await control(alice, { action: 'grant_moderator_role', target: ulla.id });
    await control(ulla, { action: 'revoke_moderator_role', target: ulla.id });
    expect(tester.payloads(ulla, 'control')).toEqual([
      { message: 'role_updated', new_role: 'moderator' },
      { message: 'role_updated', new_role: 'user' },
    ]);
    expect(updates(gus, role)).toEqual([
      [ulla.id, 'moderator'],
      [ulla.id, 'user'],
    ]);
  });

  it("take effect where the role matters: the timer's and moderation's permissions", async () => {
    const { alice, ulla } = await trio();
    await tester.command(ulla, 'timer', { action: 'start', kind: 'stopwatch', enable_ready_check: false });
    expect(tester.payloads(ulla, 'timer')).toEqual([{ message: 'error', error: 'insufficient_permissions' }]);

    await control(alice, { action: 'grant_moderator_role', target: ulla.id });
    await tester.command(ulla, 'timer', { action: 'start', kind: 'stopwatch', enable_ready_check: false });
    const [started] = tester.payloads(ulla, 'timer');
    expect(started).toMatchObject({ message: 'started', kind: 'stopwatch' });
    await moderation(ulla, { action: 'disable_raise_hands' });
    expect(tester.payloads(ulla, 'moderation')).toEqual([{ message: 'raise_hands_disabled', issued_by: ulla.id }]);

    await control(alice, { action: 'revoke_moderator_role', target: ulla.id });
    await tester.command(ulla, 'timer', { action: 'stop', timer_id: started!.timer_id });
    expect(tester.payloads(ulla, 'timer')).toEqual([{ message: 'error', error: 'insufficient_permissions' }]);
    await moderation(ulla, { action: 'enable_raise_hands' });
    expect(tester.payloads(ulla, 'moderation')).toEqual([{ message: 'error', error: 'insufficient_permissions' }]);
    await control(ulla, { action: 'grant_moderator_role', target: ulla.id });
    expect(tester.payloads(ulla, 'control')).toEqual([
      { message: 'role_updated', new_role: 'moderator' },
      { message: 'role_updated', new_role: 'user' },
      { message: 'error', error: 'insufficient_permissions' },
    ]);
  });

  it('show a new moderator the waiting room, send it what moderators get, and stop when revoked', async () => {
    const room = tester.room({ waitingRoom: true });
    const alice = await joined('Alice', { room, role: 'moderator', isRoomOwner: true });
    const ulla = tester.participant({ room, role: 'user', displayName: 'Ulla' });
    await tester.join(ulla);
    await moderation(alice, { action: 'accept', target: ulla.id });
    await control(ulla, { action: 'enter_room' });
    tester.sent(alice);
    const gus = tester.participant({ room, kind: 'guest', displayName: 'Gus' });
    await tester.join(gus);
    tester.sent(ulla);
    tester.sent(gus);
    const [waitingGus] = tester.payloads(alice, 'moderation').filter((event) => event.message === 'joined_waiting_room');

    await control(alice, { action: 'grant_moderator_role', target: ulla.id });
    expect(tester.payloads(ulla)).toEqual([{ message: 'role_updated', new_role: 'moderator' }, { message: 'waiting_room_enabled' }, waitingGus]);
    // the moderators' events reach it now, and it may accept
    const ida = tester.participant({ room, kind: 'guest', displayName: 'Ida' });
    await tester.join(ida);
    expect(tester.payloads(ulla, 'moderation')).toEqual([expect.objectContaining({ message: 'joined_waiting_room', id: ida.id })]);
    await moderation(ulla, { action: 'accept', target: gus.id });
    expect(tester.payloads(gus)).toEqual([{ message: 'accepted' }]);
    expect(tester.payloads(ulla, 'moderation')).toEqual([{ message: 'left_waiting_room', id: gus.id }]);

    await control(alice, { action: 'revoke_moderator_role', target: ulla.id });
    await tester.leave(ida);
    expect(tester.payloads(alice, 'moderation')).toEqual([
      expect.objectContaining({ message: 'joined_waiting_room', id: ida.id }),
      { message: 'left_waiting_room', id: gus.id },
      { message: 'left_waiting_room', id: ida.id },
    ]);
    expect(tester.payloads(ulla)).toEqual([{ message: 'role_updated', new_role: 'user' }]);
    await moderation(ulla, { action: 'accept', target: randomUUID() });
    expect(tester.payloads(ulla)).toEqual([{ message: 'error', error: 'insufficient_permissions' }]);
  });

  it('show a new moderator in a room without a waiting room no waiting room', async () => {
    const { alice, ulla } = await trio();
    await control(alice, { action: 'grant_moderator_role', target: ulla.id });
    expect(tester.payloads(ulla)).toEqual([{ message: 'role_updated', new_role: 'moderator' }]);
  });

  it('are refused: to non-moderators, for targets not in the room, when nothing changes, and for the owner', async () => {
    const { alice, ulla, gus } = await trio();
    const mona = await joined('Mona', { role: 'moderator' });
    for (const session of [alice, ulla, gus]) tester.sent(session);
    const grant = (target: string) => ({ action: 'grant_moderator_role', target });
    const revoke = (target: string) => ({ action: 'revoke_moderator_role', target });
    const cases: Array<[FakeSession, Record<string, unknown> & { action: string }, string]> = [
      [ulla, grant(gus.id), 'insufficient_permissions'],
      [gus, revoke(mona.id), 'insufficient_permissions'],
      [alice, grant(randomUUID()), 'unknown_participant'],
      [alice, revoke(randomUUID()), 'unknown_participant'],
      [alice, grant(mona.id), 'nothing_to_do'],
      [alice, grant(alice.id), 'nothing_to_do'],
      [alice, revoke(ulla.id), 'nothing_to_do'],
      [mona, revoke(alice.id), 'target_is_room_owner'],
      [alice, revoke(alice.id), 'target_is_room_owner'],
    ];
    for (const [sender, command, error] of cases) {
      await control(sender, command);
      expect(tester.payloads(sender), `${command.action} → ${error}`).toEqual([{ message: 'error', error }]);
    }
    for (const session of [alice, ulla, gus, mona]) expect(tester.payloads(session)).toEqual([]);
    expect([alice.role, mona.role, ulla.role, gus.role]).toEqual(['moderator', 'moderator', 'user', 'guest']);
  });

  it('are refused with not_yet_joined in the waiting room, and a target waiting is not in the room', async () => {
    const room = tester.room({ waitingRoom: true });
    const alice = await joined('Alice', { room, role: 'moderator', isRoomOwner: true });
    const mona = tester.participant({ room, role: 'moderator', displayName: 'Mona' });
    const gus = tester.participant({ room, kind: 'guest', displayName: 'Gus' });
    await tester.join(gus);
    tester.sent(gus);
    await control(gus, { action: 'grant_moderator_role', target: alice.id });
    expect(tester.payloads(gus)).toEqual([{ message: 'error', error: 'not_yet_joined' }]);
    await control(alice, { action: 'grant_moderator_role', target: gus.id });
    expect(tester.payloads(alice, 'control')).toEqual([{ message: 'error', error: 'unknown_participant' }]);
    // one connected but not joined is not in the room either
    await tester.connect(mona);
    await control(alice, { action: 'revoke_moderator_role', target: mona.id });
    expect(tester.payloads(alice, 'control')).toEqual([{ message: 'error', error: 'unknown_participant' }]);
  });

  it('change nothing when two grants cross: the second finds the role given already', async () => {
    const { alice, ulla } = await trio();
    const mona = await joined('Mona', { role: 'moderator' });
    for (const session of [alice, ulla]) tester.sent(session);
    await Promise.all([
      control(alice, { action: 'grant_moderator_role', target: ulla.id }),
      control(mona, { action: 'grant_moderator_role', target: ulla.id }),
    ]);
    await tester.flush();
    expect(tester.payloads(ulla)).toEqual([{ message: 'role_updated', new_role: 'moderator' }]);
    expect(updates(alice, role)).toEqual([[ulla.id, 'moderator']]);
  });
});
