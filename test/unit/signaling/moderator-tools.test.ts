/**
 * The moderators' tools for removing participants (`moderation` `kick`, `ban`,
 * `send_to_waiting_room`, `debrief`), switching the waiting room (`enable_waiting_room`,
 * `disable_waiting_room`) and renaming (`change_display_name`) through the module tester: the real
 * modules over the in-process bus, fake participants, and for the ban a real database (its
 * `room_bans`). Who may do what to whom, each participant's frames (checked against the contract
 * by the tester; a removed one's last frame before its socket closes with 1000), the waiting room
 * afterwards, and the order of a session's own commands and a moderator's order about it.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DB } from '../../../src/db/schema.js';
import { createRoomEntryService } from '../../../src/domain/rooms/room-entry.service.js';
import type { RoomContext } from '../../../src/signaling/room-context.js';
import { createTestDatabase, type TestDatabase } from '../../support/database.js';
import { createModuleTester, type FakeSession, type ModuleTester, type ParticipantOptions } from '../../support/module-tester.js';

let tester: ModuleTester;
beforeEach(() => {
  tester = createModuleTester();
});
afterEach(async () => {
  await tester.close();
});

/** Joins a participant and drops what it was sent. */
async function joined(displayName: string, options: ParticipantOptions = {}): Promise<FakeSession> {
  const session = tester.participant({ displayName, ...options });
  await tester.join(session);
  tester.sent(session);
  return session;
}

/** Joins a participant who may have to wait; `by` lets it in then. */
async function entered(displayName: string, options: ParticipantOptions & { room: RoomContext }, by: FakeSession): Promise<FakeSession> {
  const session = await joined(displayName, options);
  if (session.state !== 'waiting') return session;
  await moderation(by, { action: 'accept', target: session.id });
  await tester.command(session, 'control', { action: 'enter_room' });
  tester.sent(session);
  return session;
}

/** Owner Alice, moderator Mona, user Ulla and guest Gus in the room (the default one), each having seen the others join. */
async function quartet(room: RoomContext = tester.room()) {
  const alice = await joined('Alice', { room, role: 'moderator', isRoomOwner: true });
  const mona = await joined('Mona', { room, role: 'moderator' });
  const ulla = await entered('Ulla', { room, role: 'user' }, alice);
  const gus = await entered('Gus', { room, kind: 'guest' }, alice);
  const everyone = [alice, mona, ulla, gus];
  for (const session of everyone) tester.sent(session);
  return { alice, mona, ulla, gus, everyone };
}

const moderation = (session: FakeSession, payload: Record<string, unknown> & { action: string }) => tester.command(session, 'moderation', payload);

/** The `left` events a session got since the last look, as [id, reason]. */
const lefts = (session: FakeSession) =>
  tester
    .payloads(session, 'control')
    .filter((event) => event.message === 'left')
    .map((event) => [event.id, event.reason]);

/** Who a newcomer's `join_success` lists. */
async function listedBy(latecomer: FakeSession): Promise<string[]> {
  await tester.join(latecomer);
  const [success] = tester.payloads(latecomer, 'control');
  return (success!.participants as Array<{ id: string }>).map((p) => p.id).sort();
}

/** Expects the session ended by a moderator: `lastWord` its last frame, its socket closed with 1000; returns its frames. */
function expectEnded(session: FakeSession, lastWord: Record<string, unknown>) {
  const frames = tester.payloads(session);
  expect(frames.at(-1)).toEqual(lastWord);
  expect(session.closedWith?.code).toBe(1000);
  expect(session.state).toBe('closed');
  return frames;
}

describe('kick', () => {
  it('ends the target (kicked, then its socket closes with 1000) and tells the others it left, kicked', async () => {
    const { alice, mona, ulla, gus } = await quartet();
    await moderation(mona, { action: 'kick', target: ulla.id });
    expectEnded(ulla, { message: 'kicked' });
    expect(ulla.closedWith).toEqual({ code: 1000, reason: 'kicked' });
    for (const other of [alice, mona, gus]) expect(lefts(other)).toEqual([[ulla.id, 'kicked']]);
    expect(tester.payloads(mona, 'moderation')).toEqual([]);
    expect(await listedBy(tester.participant({ room: alice.room, displayName: 'Late' }))).toEqual([alice.id, mona.id, gus.id].sort());
  });

  it('lets the kicked participant come back, waiting first when the room has its waiting room on', async () => {
    const room = tester.room({ waitingRoom: true });
    const alice = await joined('Alice', { room, role: 'moderator', isRoomOwner: true });
    const gus = tester.participant({ room, kind: 'guest', displayName: 'Gus' });
    await tester.join(gus);
    await moderation(alice, { action: 'accept', target: gus.id });
    await tester.command(gus, 'control', { action: 'enter_room' });
    await moderation(alice, { action: 'kick', target: gus.id });
    expectEnded(gus, { message: 'kicked' });

    // accepted before, the same participant (a resumed session) waits again
    const back = tester.participant({ resumes: gus, displayName: 'Gus' });
    await tester.join(back);
    expect(tester.payloads(back)).toEqual([{ message: 'in_waiting_room' }]);
  });

  it('is refused: to non-moderators, for targets not in the room, and for the room owner', async () => {
    const room = tester.room({ waitingRoom: true });
    const { alice, mona, ulla, gus, everyone } = await quartet(room);
    const waiting = tester.participant({ room, kind: 'guest', displayName: 'Wanda' });
    await tester.join(waiting);
    for (const session of everyone) tester.sent(session);
    const cases: Array<[FakeSession, string, string]> = [
      [ulla, gus.id, 'insufficient_permissions'],
      [gus, ulla.id, 'insufficient_permissions'],
      [mona, randomUUID(), 'unknown_participant'],
      [mona, waiting.id, 'unknown_participant'],
      [mona, alice.id, 'cannot_kick_room_owner'],
      [alice, alice.id, 'cannot_kick_room_owner'],
    ];
    for (const [sender, target, error] of cases) {
      await moderation(sender, { action: 'kick', target });
      expect(tester.payloads(sender), error).toEqual([{ message: 'error', error }]);
    }
    for (const session of [...everyone, waiting]) expect(session.closedWith).toBeUndefined();
    for (const session of everyone) expect(tester.payloads(session)).toEqual([]);
  });
});

describe('send_to_waiting_room', () => {
  it('moves the target to the waiting room, turns the waiting room on for everyone, and accept lets it back', async () => {
    const { alice, mona, ulla, gus } = await quartet();
    await tester.command(ulla, 'control', { action: 'raise_hand' });
    for (const session of [alice, mona, gus]) tester.sent(session);

    await moderation(alice, { action: 'send_to_waiting_room', target: ulla.id });
    expect(tester.payloads(ulla)).toEqual([{ message: 'waiting_room_enabled' }, { message: 'sent_to_waiting_room' }]);
    expect(ulla.state).toBe('waiting');
    expect(ulla.closedWith).toBeUndefined();
    for (const other of [alice, mona, gus]) expect(lefts(other)).toEqual([[ulla.id, 'sent_to_waiting_room']]);
    expect(tester.payloads(gus, 'moderation')).toEqual([{ message: 'waiting_room_enabled' }]);
    for (const moderator of [alice, mona]) {
      expect(tester.payloads(moderator, 'moderation')).toEqual([
        { message: 'waiting_room_enabled' },
        {
          message: 'joined_waiting_room',
          id: ulla.id,
          control: expect.objectContaining({ display_name: 'Ulla', role: 'user', hand_is_up: false }),
        },
      ]);
    }
    await tester.command(ulla, 'control', { action: 'raise_hand' });
    expect(tester.payloads(ulla)).toEqual([{ message: 'error', error: 'not_yet_joined' }]);

    await moderation(mona, { action: 'accept', target: ulla.id });
    expect(tester.payloads(ulla)).toEqual([{ message: 'accepted' }]);
    await tester.command(ulla, 'control', { action: 'enter_room' });
    const [success] = tester.payloads(ulla, 'control');
    expect(success).toMatchObject({ message: 'join_success', id: ulla.id, role: 'user' });
    expect((success!.participants as Array<{ id: string }>).map((p) => p.id).sort()).toEqual([alice.id, mona.id, gus.id].sort());
    const [back] = tester.payloads(gus, 'control');
    expect(back).toMatchObject({ message: 'joined', id: ulla.id, control: { hand_is_up: false } });
  });

  it('keeps the waiting room on until the room empties: newcomers who are no moderators wait, then no longer', async () => {
    const { alice, ulla, gus, everyone } = await quartet();
    const { room } = alice;
    await moderation(alice, { action: 'send_to_waiting_room', target: ulla.id });
    const late = tester.participant({ room, kind: 'guest', displayName: 'Late' });
    await tester.join(late);
    expect(tester.payloads(late)).toEqual([{ message: 'in_waiting_room' }]);
    const mod = tester.participant({ room, role: 'moderator', displayName: 'Max' });
    await tester.join(mod);
    expect(tester.payloads(mod, 'control')[0]!.moderation).toMatchObject({ waiting_room_enabled: true });
    // the one sent back, starting anew with its old id, waits too (it is no longer accepted)
    await tester.leave(ulla);
    const again = tester.participant({ resumes: ulla, displayName: 'Ulla' });
    await tester.join(again);
    expect(tester.payloads(again)).toEqual([{ message: 'in_waiting_room' }]);

    for (const session of [...everyone.filter((s) => s !== ulla), mod, late, again]) await tester.leave(session);
    const fresh = tester.participant({ room, kind: 'guest', displayName: 'Fresh' });
    await tester.join(fresh);
    expect(tester.payloads(fresh, 'control')[0]).toMatchObject({ message: 'join_success' });
    expect(gus.state).toBe('closed');
  });

  it('tells nobody waiting_room_enabled in a room that has its waiting room on', async () => {
    const room = tester.room({ waitingRoom: true });
    const alice = await joined('Alice', { room, role: 'moderator', isRoomOwner: true });
    const ulla = tester.participant({ room, displayName: 'Ulla' });
    await tester.join(ulla);
    await moderation(alice, { action: 'accept', target: ulla.id });
    await tester.command(ulla, 'control', { action: 'enter_room' });
    tester.sent(alice);
    tester.sent(ulla);
    await moderation(alice, { action: 'send_to_waiting_room', target: ulla.id });
    expect(tester.payloads(ulla)).toEqual([{ message: 'sent_to_waiting_room' }]);
    expect(tester.payloads(alice, 'moderation').map((event) => event.message)).toEqual(['joined_waiting_room']);
  });

  it('is refused: to non-moderators, for targets not in the room, and for the room owner', async () => {
    const { alice, mona, ulla, gus, everyone } = await quartet();
    const cases: Array<[FakeSession, string, string]> = [
      [ulla, gus.id, 'insufficient_permissions'],
      [mona, randomUUID(), 'unknown_participant'],
      [mona, alice.id, 'cannot_send_room_owner_to_waiting_room'],
    ];
    for (const [sender, target, error] of cases) {
      await moderation(sender, { action: 'send_to_waiting_room', target });
      expect(tester.payloads(sender), error).toEqual([{ message: 'error', error }]);
    }
    for (const session of everyone) expect([session.state, tester.payloads(session)]).toEqual(['joined', []]);
    // the waiting room was not turned on
    const late = tester.participant({ room: alice.room, kind: 'guest', displayName: 'Late' });
    await tester.join(late);
    expect(tester.payloads(late, 'control')[0]).toMatchObject({ message: 'join_success' });
  });
});

describe('enable_waiting_room and disable_waiting_room', () => {
  it('switched off: everyone in the room is told, then each one waiting is let in, oldest first', async () => {
    const room = tester.room({ waitingRoom: true });
    const alice = await joined('Alice', { room, role: 'moderator', isRoomOwner: true });
    const ulla = await entered('Ulla', { room, role: 'user' }, alice);
    const first = await joined('First', { room, kind: 'guest' });
    await tester.advance(1_000);
    const second = await joined('Second', { room, kind: 'sip' });
    tester.sent(alice);
    tester.sent(ulla);
    await moderation(alice, { action: 'disable_waiting_room' });
    expect(tester.payloads(alice, 'moderation')).toEqual([
      { message: 'waiting_room_disabled' },
      { message: 'left_waiting_room', id: first.id },
      { message: 'left_waiting_room', id: second.id },
    ]);
    expect(tester.payloads(ulla)).toEqual([{ message: 'waiting_room_disabled' }]);
    for (const waiting of [first, second]) {
      expect(tester.payloads(waiting)).toEqual([{ message: 'accepted' }]);
      expect(waiting.state).toBe('accepted');
    }
    const late = await joined('Late', { room, kind: 'guest' });
    expect(late.state).toBe('joined');
  });

  it('switched on: everyone is told each time, newcomers wait, and send_to_waiting_room after a switch off tells everyone again', async () => {
    const room = tester.room({ waitingRoom: true });
    const alice = await joined('Alice', { room, role: 'moderator', isRoomOwner: true });
    const gus = await entered('Gus', { room, kind: 'guest' }, alice);
    tester.sent(alice);
    await moderation(alice, { action: 'disable_waiting_room' });
    expect(tester.payloads(gus)).toEqual([{ message: 'waiting_room_disabled' }]);
    // the room's own setting is on, the meeting's switch off: sending back turns it on, for all to see
    await moderation(alice, { action: 'send_to_waiting_room', target: gus.id });
    expect(tester.payloads(gus)[0]).toEqual({ message: 'waiting_room_enabled' });
    await moderation(alice, { action: 'enable_waiting_room' });
    await moderation(alice, { action: 'enable_waiting_room' });
    expect(tester.payloads(alice, 'moderation').filter((event) => event.message === 'waiting_room_enabled')).toHaveLength(3);
    const late = await joined('Late', { room, kind: 'guest' });
    expect(late.state).toBe('waiting');
  });

  it('are refused to users and guests, and change nothing', async () => {
    const { alice, ulla, gus, everyone } = await quartet();
    for (const sender of [ulla, gus]) {
      for (const action of ['enable_waiting_room', 'disable_waiting_room']) {
        await moderation(sender, { action });
        expect(tester.payloads(sender)).toEqual([{ message: 'error', error: 'insufficient_permissions' }]);
      }
    }
    for (const session of everyone) expect(tester.payloads(session)).toEqual([]);
    const late = await joined('Late', { room: alice.room, kind: 'guest' });
    expect(late.state).toBe('joined');
  });
});

describe('change_display_name', () => {
  it('renames on the target: display_name_changed to everyone, then update to the others', async () => {
    const { alice, mona, ulla, gus, everyone } = await quartet();
    await moderation(mona, { action: 'change_display_name', target: gus.id, new_name: ' Gustav ' });
    const changed = { message: 'display_name_changed', target: gus.id, issued_by: mona.id, old_name: 'Gus', new_name: 'Gustav' };
    for (const session of everyone) {
      const frames = tester.sent(session).map((frame) => [frame.namespace, frame.payload.message]);
      expect(frames).toEqual(
        session === gus
          ? [['moderation', 'display_name_changed']]
          : [
              ['moderation', 'display_name_changed'],
              ['control', 'update'],
            ],
      );
    }
    await moderation(alice, { action: 'change_display_name', target: gus.id, new_name: 'Gus' });
    expect(tester.payloads(ulla, 'moderation')).toEqual([{ ...changed, issued_by: alice.id, old_name: 'Gustav', new_name: 'Gus' }]);
    expect(gus.displayName).toBe('Gus');
  });

  it('refuses non-moderators, registered users, absent targets and bad names', async () => {
    const { alice, mona, ulla, gus, everyone } = await quartet();
    const refusals: Array<[FakeSession, string, string, string]> = [
      [ulla, gus.id, 'Renamed', 'insufficient_permissions'],
      [gus, gus.id, 'Renamed', 'insufficient_permissions'],
      [mona, ulla.id, 'Renamed', 'cannot_change_name_of_registered_users'],
      [mona, alice.id, 'Renamed', 'cannot_change_name_of_registered_users'],
      [mona, randomUUID(), 'Renamed', 'unknown_participant'],
      [mona, gus.id, '   ', 'invalid_display_name'],
      [mona, gus.id, 'x'.repeat(101), 'invalid_display_name'],
    ];
    for (const [sender, target, new_name, error] of refusals) {
      await moderation(sender, { action: 'change_display_name', target, new_name });
      expect(tester.payloads(sender)).toEqual([{ message: 'error', error }]);
    }
    for (const session of everyone) expect(tester.payloads(session)).toEqual([]);
    expect(gus.displayName).toBe('Gus');
  });
});

describe('debrief', () => {
  it.each([
    ['guests', ['gus'], ['alice', 'mona', 'ulla']],
    ['users_and_guests', ['ulla', 'gus'], ['alice', 'mona']],
    ['all', ['alice', 'mona', 'ulla', 'gus'], []],
  ] as const)('with kick_scope %s ends the sessions of %j, and starts the debriefing for %j', async (scope, removed, staying) => {
    const sessions = await quartet();
    const { alice } = sessions;
    await moderation(alice, { action: 'debrief', kick_scope: scope });
    const issued_by = alice.id;
    for (const name of removed) {
      const frames = expectEnded(sessions[name], { message: 'session_ended', issued_by });
      expect(
        frames.filter((frame) => frame.message !== 'left'),
        name,
      ).toEqual([{ message: 'waiting_room_enabled' }, { message: 'session_ended', issued_by }]);
    }
    for (const name of staying) {
      const session = sessions[name];
      expect(tester.payloads(session, 'moderation'), name).toEqual([{ message: 'waiting_room_enabled' }, { message: 'debriefing_started', issued_by }]);
      expect(lefts(session).sort()).toEqual(removed.map((gone) => [sessions[gone].id, 'kicked']).sort());
      expect(session.state).toBe('joined');
    }
  });

  it('makes those it removed wait when they come back, and leaves those waiting waiting', async () => {
    const room = tester.room({ waitingRoom: true });
    const alice = await joined('Alice', { room, role: 'moderator', isRoomOwner: true });
    const gus = tester.participant({ room, kind: 'guest', displayName: 'Gus' });
    const wanda = tester.participant({ room, kind: 'guest', displayName: 'Wanda' });
    await tester.join(gus);
    await moderation(alice, { action: 'accept', target: gus.id });
    await tester.command(gus, 'control', { action: 'enter_room' });
    await tester.join(wanda);
    tester.sent(alice);
    tester.sent(wanda);

    await moderation(alice, { action: 'debrief', kick_scope: 'guests' });
    expectEnded(gus, { message: 'session_ended', issued_by: alice.id });
    expect(tester.payloads(alice, 'moderation')).toEqual([{ message: 'debriefing_started', issued_by: alice.id }]);
    expect([wanda.state, tester.payloads(wanda)]).toEqual(['waiting', []]);
    const back = tester.participant({ resumes: gus, displayName: 'Gus' });
    await tester.join(back);
    expect(tester.payloads(back)).toEqual([{ message: 'in_waiting_room' }]);
    const max = await joined('Max', { room, role: 'moderator' });
    expect(max.state).toBe('joined');
  });

  it('is for moderators only', async () => {
    const { ulla, gus, everyone } = await quartet();
    for (const sender of [ulla, gus]) {
      await moderation(sender, { action: 'debrief', kick_scope: 'all' });
      expect(tester.payloads(sender)).toEqual([{ message: 'error', error: 'insufficient_permissions' }]);
    }
    for (const session of everyone) expect([session.state, tester.payloads(session)]).toEqual(['joined', []]);
  });
});

describe("a moderator's order and the target's own commands", () => {
  /** Something of the session's under way (as a slow command of its own) until the test lets go. */
  function busy(session: FakeSession) {
    let letGo!: () => void;
    const done = new Promise<void>((resolve) => session.enqueue(() => new Promise<void>((release) => (letGo = release)).then(resolve)));
    return { done, letGo: () => letGo() };
  }

  it('take turns: a kick waits for the command in progress, and no command after it acts', async () => {
    const alice = await joined('Alice', { role: 'moderator', isRoomOwner: true });
    const mona = await joined('Mona', { role: 'moderator' });
    tester.sent(alice);

    const { done, letGo } = busy(mona);
    await moderation(alice, { action: 'kick', target: mona.id });
    // Mona's command is still under way: she is still in the room, and told nothing yet
    expect([mona.state, mona.closedWith, tester.payloads(mona)]).toEqual(['joined', undefined, []]);
    expect(lefts(alice)).toEqual([]);
    const after = tester.command(mona, 'timer', { action: 'start', kind: 'stopwatch', enable_ready_check: false });

    letGo();
    await done;
    await after;
    await tester.flush();
    expectEnded(mona, { message: 'kicked' });
    expect(lefts(alice)).toEqual([[mona.id, 'kicked']]);
    expect(tester.payloads(alice, 'timer')).toEqual([]);
  });

  it('take turns: a role granted while a command is under way counts from the next command on', async () => {
    const alice = await joined('Alice', { role: 'moderator', isRoomOwner: true });
    const ulla = await joined('Ulla', { role: 'user' });
    const { done, letGo } = busy(ulla);
    await tester.command(alice, 'control', { action: 'grant_moderator_role', target: ulla.id });
    expect([ulla.role, tester.payloads(ulla)]).toEqual(['user', []]);
    letGo();
    await done;
    await tester.flush();
    expect([ulla.role, tester.payloads(ulla)]).toEqual(['moderator', [{ message: 'role_updated', new_role: 'moderator' }]]);
  });
});

describe('ban', () => {
  let database: TestDatabase;
  let db: Kysely<DB>;
  beforeAll(async () => {
    database = await createTestDatabase();
    db = database.database.db;
  });
  afterAll(() => database.close());

  const user = async (name: string) =>
    (
      await db
        .insertInto('users')
        .values({ oidc_issuer: 'https://idp.test', oidc_sub: randomUUID(), email: `${name}@example.org`, display_name: name, tariff_name: null })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
  const bansOf = (roomId: string) => db.selectFrom('room_bans').select(['user_id', 'created_by']).where('room_id', '=', roomId).execute();

  /** A room in the database (with its owner) and a tester on that database, with the owner Alice joined. */
  async function bannableRoom(options: Partial<RoomContext> = {}) {
    await tester.close();
    tester = createModuleTester({ roomEntry: createRoomEntryService({ db }) });
    const ownerId = await user('owner');
    const { id: roomId } = await db.insertInto('rooms').values({ created_by: ownerId }).returning('id').executeTakeFirstOrThrow();
    const room = tester.room({ roomId, ownerId, ...options });
    const alice = await joined('Alice', { room, role: 'moderator', isRoomOwner: true, userId: ownerId });
    return { room, ownerId, alice };
  }

  it('bans the user from the room and ends every session of it there: in the room, waiting, or not joined yet', async () => {
    const { room, ownerId, alice } = await bannableRoom({ waitingRoom: true });
    const ullaId = await user('ulla');
    const [inRoom, waiting, connected] = [0, 1, 2].map(() => tester.participant({ room, role: 'user', userId: ullaId, displayName: 'Ulla' }));
    await tester.join(inRoom!);
    await moderation(alice, { action: 'accept', target: inRoom!.id });
    await tester.command(inRoom!, 'control', { action: 'enter_room' });
    await tester.join(waiting!);
    await tester.connect(connected!);
    const gus = tester.participant({ room, kind: 'guest', displayName: 'Gus' });
    await tester.join(gus);
    await moderation(alice, { action: 'accept', target: gus.id });
    await tester.command(gus, 'control', { action: 'enter_room' });
    for (const session of [alice, gus]) tester.sent(session);

    await moderation(alice, { action: 'ban', target: inRoom!.id });
    expect(await bansOf(room.roomId)).toEqual([{ user_id: ullaId, created_by: ownerId }]);
    for (const session of [inRoom!, waiting!, connected!]) {
      expectEnded(session, { message: 'banned' });
      expect(session.closedWith).toEqual({ code: 1000, reason: 'banned' });
    }
    for (const other of [alice, gus]) expect(lefts(other)).toEqual([[inRoom!.id, 'banned']]);
    expect(tester.payloads(alice, 'moderation')).toEqual([{ message: 'left_waiting_room', id: waiting!.id }]);
    expect(gus.state).toBe('joined');
  });

  it('refuses callers (cannot_ban_guest), the owner, non-moderators and targets not in the room, and bans nobody', async () => {
    const { room, alice } = await bannableRoom();
    const mona = await joined('Mona', { room, role: 'moderator', userId: await user('mona') });
    const ulla = await joined('Ulla', { room, role: 'user', userId: await user('ulla') });
    const gus = await joined('Gus', { room, kind: 'guest' });
    const phone = await joined('+49 30 1234', { room, kind: 'sip' });
    const everyone = [alice, mona, ulla, gus, phone];
    for (const session of everyone) tester.sent(session);
    const cases: Array<[FakeSession, string, string]> = [
      [ulla, gus.id, 'insufficient_permissions'],
      [mona, randomUUID(), 'unknown_participant'],
      [mona, phone.id, 'cannot_ban_guest'],
      [mona, alice.id, 'cannot_ban_room_owner'],
    ];
    for (const [sender, target, error] of cases) {
      await moderation(sender, { action: 'ban', target });
      expect(tester.payloads(sender), error).toEqual([{ message: 'error', error }]);
    }
    expect(await bansOf(room.roomId)).toEqual([]);
    for (const session of everyone) expect([session.state, tester.payloads(session)]).toEqual(['joined', []]);
  });

  it("ends a guest's session and deactivates the code it came in with (by the sender), leaving the other guests of the code", async () => {
    const { room, alice } = await bannableRoom();
    const monaId = await user('mona');
    const mona = await joined('Mona', { room, role: 'moderator', userId: monaId });
    const { code } = await db
      .insertInto('room_invites')
      .values({ room_id: room.roomId, created_by: room.ownerId, updated_by: room.ownerId })
      .returning('code')
      .executeTakeFirstOrThrow();
    const [gus, gia] = [await joined('Gus', { room, kind: 'guest', inviteCode: code }), await joined('Gia', { room, kind: 'guest', inviteCode: code })];
    for (const session of [alice, mona, gus, gia]) tester.sent(session);

    await moderation(mona, { action: 'ban', target: gus.id });
    expectEnded(gus, { message: 'banned' });
    expect(gus.closedWith).toEqual({ code: 1000, reason: 'banned' });
    for (const other of [alice, mona, gia]) expect(lefts(other)).toEqual([[gus.id, 'banned']]);
    expect(gia.state).toBe('joined');
    const invite = await db.selectFrom('room_invites').select(['active', 'updated_by']).where('code', '=', code).executeTakeFirstOrThrow();
    expect(invite).toEqual({ active: false, updated_by: monaId });
    expect(await bansOf(room.roomId)).toEqual([]);
  });

  it("records the ban of a guest made moderator as the room owner's", async () => {
    const { room, ownerId, alice } = await bannableRoom();
    const gus = await joined('Gus', { room, kind: 'guest' });
    const ullaId = await user('ulla');
    const ulla = await joined('Ulla', { room, role: 'user', userId: ullaId });
    await tester.command(alice, 'control', { action: 'grant_moderator_role', target: gus.id });
    await moderation(gus, { action: 'ban', target: ulla.id });
    expectEnded(ulla, { message: 'banned' });
    expect(await bansOf(room.roomId)).toEqual([{ user_id: ullaId, created_by: ownerId }]);
  });
});
