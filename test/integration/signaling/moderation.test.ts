/**
 * The waiting room (`moderation`) over real sockets: in a room with the waiting room on, everyone
 * but moderators waits (`in_waiting_room`) and the moderators see them (`joined_waiting_room`, and
 * in their `join_success`); a moderator's `accept` lets one in (`accepted`, `left_waiting_room`),
 * and only then does `enter_room` work. Nobody reaches the room any other way: a waiting
 * participant's other commands are refused, a non-moderator cannot accept, an accept counts once.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { SignalingClient, Starter } from '../../support/signaling-client.js';
import { redisUrl } from '../../support/signaling.js';
import { roomKeysLeft, useSignalingRooms, type RoomOptions } from '../../support/signaling-rooms.js';

/** `unmoderated`: a tariff without the moderation module, so without a waiting room. */
const rooms = useSignalingRooms({ unmoderated: { disabled_modules: ['moderation'] } });
const { open, openResuming, join, callIn } = rooms;
/** A room of a fresh owner, with the waiting room on unless told otherwise. */
const room = (options: RoomOptions = {}) => rooms.room({ waitingRoom: true, ...options });

/** Opens and joins a participant who must wait; returns its socket once it got `in_waiting_room`. */
async function wait(starter: Starter, name: string) {
  const client = await open(starter);
  client.command('control', 'join', { display_name: name });
  expect((await client.next()).payload).toEqual({ message: 'in_waiting_room' });
  return client;
}

/** A waiting guest's socket, with its id as the moderators saw it arrive. */
type Waiting = SignalingClient & { resumption: string; id: string };

/** A room with its owner Alice in it, and guests of these names waiting. */
async function aliceAndWaiting<const Names extends readonly string[]>(...names: Names) {
  const { roomId, moderator, guest } = await room();
  const alice = await join(moderator, 'Alice');
  const waiting: Waiting[] = [];
  for (const name of names) {
    const client = await wait(guest, name);
    waiting.push(Object.assign(client, { id: (await alice.next('moderation', 'joined_waiting_room')).payload.id }));
  }
  return { roomId, moderator, guest, alice, waiting: waiting as unknown as { -readonly [K in keyof Names]: Waiting } };
}

describe('the waiting room', () => {
  it('holds a guest until a moderator accepts it; then it enters and the room sees it join', async () => {
    const { moderator, guest, invitee } = await room();
    const alice = await join(moderator, 'Alice');
    expect(alice.joinSuccess.moderation).toEqual({ raise_hands_enabled: true, waiting_room_enabled: true, waiting_room_participants: [] });

    const gus = await wait(guest, '  Gus ');
    const arrived = (await alice.next('moderation', 'joined_waiting_room')).payload;
    expect(arrived).toEqual({
      message: 'joined_waiting_room',
      id: expect.any(String),
      control: {
        display_name: 'Gus',
        role: 'guest',
        participation_kind: 'guest',
        hand_is_up: false,
        joined_at: expect.any(String),
        left_at: null,
        hand_updated_at: arrived.control.joined_at,
        is_room_owner: false,
      },
    });
    await alice.expectNothing('control', 'joined');

    // a moderator invitee skips the waiting room, and finds the waiting guest in its join_success
    const mona = await join(await invitee('moderator'), 'Mona');
    const { message: _, ...waiting } = arrived;
    expect(mona.joinSuccess.moderation).toEqual({ raise_hands_enabled: true, waiting_room_enabled: true, waiting_room_participants: [waiting] });
    expect(mona.joinSuccess.participants.map((p) => p.id)).toEqual([alice.joinSuccess.id]);
    expect((await alice.next('control', 'joined')).payload.id).toBe(mona.joinSuccess.id);

    alice.command('moderation', 'accept', { target: randomUUID() });
    expect((await alice.next('moderation', 'error')).payload).toEqual({ message: 'error', error: 'not_in_waiting_room' });

    alice.command('moderation', 'accept', { target: arrived.id });
    expect((await gus.next()).payload).toEqual({ message: 'accepted' });
    for (const client of [alice, mona]) {
      expect((await client.next('moderation', 'left_waiting_room')).payload).toEqual({ message: 'left_waiting_room', id: arrived.id });
    }
    // accepted once: a second accept finds nobody waiting
    mona.command('moderation', 'accept', { target: arrived.id });
    expect((await mona.next('moderation', 'error')).payload.error).toBe('not_in_waiting_room');

    gus.command('control', 'enter_room');
    const entered = (await gus.next()).payload;
    expect(entered).toMatchObject({ message: 'join_success', id: arrived.id, display_name: 'Gus', role: 'guest' });
    expect(entered.moderation).toEqual({ raise_hands_enabled: true });
    expect(entered.participants.map((p: { id: string }) => p.id)).toEqual([alice.joinSuccess.id, mona.joinSuccess.id]);
    for (const client of [alice, mona]) {
      const joined = (await client.next('control', 'joined')).payload;
      expect(joined).toEqual({
        message: 'joined',
        id: arrived.id,
        control: { ...arrived.control, joined_at: joined.control.joined_at, hand_updated_at: joined.control.joined_at },
      });
    }

    // in the room, a guest still may not accept, and may not enter again
    gus.command('moderation', 'accept', { target: randomUUID() });
    expect((await gus.next('moderation', 'error')).payload).toEqual({ message: 'error', error: 'insufficient_permissions' });
    gus.command('control', 'enter_room');
    expect((await gus.next('control', 'error')).payload.error).toBe('not_accepted_or_not_in_waiting_room');
    await Promise.all([alice.expectNothing('moderation'), mona.expectNothing('moderation')]);
  });

  it('holds users and callers too, while moderators go straight in', async () => {
    const { roomId, moderator, invitee } = await room();
    const alice = await join(moderator, 'Alice');
    const mona = await join(await invitee('moderator'), 'Mona');
    expect(mona.joinSuccess.role).toBe('moderator');
    expect((await alice.next('control', 'joined')).payload.id).toBe(mona.joinSuccess.id);
    await wait(await invitee('user'), 'Ulla');

    const phone = await callIn(roomId);
    phone.command('control', 'join', { display_name: '+49 30 1234' });
    expect((await phone.next()).payload).toEqual({ message: 'in_waiting_room' });

    const kinds = [];
    for (let i = 0; i < 2; i++) kinds.push((await alice.next('moderation', 'joined_waiting_room')).payload.control);
    expect(kinds.map((c) => [c.display_name, c.role, c.participation_kind])).toEqual([
      ['Ulla', 'user', 'user'],
      ['+49 30 1234', 'guest', 'sip'],
    ]);
    // the waiting ones are not in the room
    await alice.expectNothing('control', 'joined');
  });

  it('refuses every other way in for a waiting participant', async () => {
    const { moderator, guest } = await room();
    const alice = await join(moderator, 'Alice');
    const gus = await wait(guest, 'Gus');
    const { id } = (await alice.next('moderation', 'joined_waiting_room')).payload;

    gus.command('control', 'enter_room');
    expect((await gus.next('control', 'error')).payload.error).toBe('not_accepted_or_not_in_waiting_room');
    gus.command('control', 'join', { display_name: 'Gus' });
    expect((await gus.next('control', 'error')).payload.error).toBe('already_joined');
    gus.command('moderation', 'accept', { target: id });
    expect((await gus.next('control', 'error')).payload.error).toBe('not_yet_joined');
    gus.command('timer', 'start', { kind: 'stopwatch', enable_ready_check: false });
    expect((await gus.next('control', 'error')).payload.error).toBe('not_yet_joined');
    await gus.expectNothing(undefined, undefined, 100);
    await alice.expectNothing();

    // still waiting: the moderator can accept it
    alice.command('moderation', 'accept', { target: id });
    await gus.next('moderation', 'accepted');
  });

  it('does not let a user who is in the room accept (moderators only)', async () => {
    const { moderator, invitee } = await room({ waitingRoom: false });
    const withWaiting = await room();
    await join(moderator, 'Alice');
    const ulla = await join(await invitee('user'), 'Ulla');
    expect(ulla.joinSuccess.moderation).toEqual({ raise_hands_enabled: true });
    ulla.command('moderation', 'accept', { target: randomUUID() });
    expect((await ulla.next('moderation', 'error')).payload.error).toBe('insufficient_permissions');

    // nor a user who was accepted into a room with a waiting room
    const boss = await join(withWaiting.moderator, 'Boss');
    const waiting = await wait(await withWaiting.invitee('user'), 'Uwe');
    const { id } = (await boss.next('moderation', 'joined_waiting_room')).payload;
    boss.command('moderation', 'accept', { target: id });
    await waiting.next('moderation', 'accepted');
    waiting.command('control', 'enter_room');
    await waiting.next('control', 'join_success');
    waiting.command('moderation', 'accept', { target: boss.joinSuccess.id });
    expect((await waiting.next('moderation', 'error')).payload.error).toBe('insufficient_permissions');
  });

  it('lets exactly one of two moderators accepting at once win', async () => {
    const { moderator, guest, invitee } = await room();
    const alice = await join(moderator, 'Alice');
    const mona = await join(await invitee('moderator'), 'Mona');
    const gus = await wait(guest, 'Gus');
    const { id } = (await alice.next('moderation', 'joined_waiting_room')).payload;
    alice.command('moderation', 'accept', { target: id });
    mona.command('moderation', 'accept', { target: id });
    await gus.next('moderation', 'accepted');
    // the loser's error, whichever moderator lost; then time for a second accepted (or error) to show up
    const errors = () => [alice, mona].flatMap((client) => client.received.filter((f) => f.namespace === 'moderation' && f.payload.message === 'error'));
    for (const deadline = Date.now() + 3_000; errors().length === 0 && Date.now() < deadline;) await new Promise((resolve) => setTimeout(resolve, 10));
    await gus.expectNothing('moderation', 'accepted');
    expect(errors().map((f) => f.payload.error)).toEqual(['not_in_waiting_room']);
    expect(gus.received.filter((f) => f.payload.message === 'accepted')).toHaveLength(1);
    expect(alice.received.filter((f) => f.payload.message === 'left_waiting_room')).toHaveLength(1);
  });

  it('tells the moderators when a waiting participant goes, and only when it was still waiting', async () => {
    const {
      moderator,
      alice,
      waiting: [gus, ida],
    } = await aliceAndWaiting('Gus', 'Ida');
    const [gusId, idaId] = [gus.id, ida.id];

    await gus.close();
    expect((await alice.next('moderation', 'left_waiting_room')).payload).toEqual({ message: 'left_waiting_room', id: gusId });
    await alice.expectNothing('control', 'left');

    alice.command('moderation', 'accept', { target: idaId });
    await ida.next('moderation', 'accepted');
    await alice.next('moderation', 'left_waiting_room');
    await ida.close(); // accepted, never entered: the moderators saw it leave already
    await alice.expectNothing('moderation');
    await alice.expectNothing('control', 'left');

    const mona = await join(moderator, 'Alice again');
    expect(mona.joinSuccess.moderation).toEqual({ raise_hands_enabled: true, waiting_room_enabled: true, waiting_room_participants: [] });
  });

  it('keeps each room to itself', async () => {
    const first = await room();
    const second = await room();
    const alice = await join(first.moderator, 'Alice');
    const olga = await join(second.moderator, 'Olga');
    const gus = await wait(second.guest, 'Gus');
    const { id } = (await olga.next('moderation', 'joined_waiting_room')).payload;
    await alice.expectNothing('moderation');
    // a moderator of another room cannot accept it
    alice.command('moderation', 'accept', { target: id });
    expect((await alice.next('moderation', 'error')).payload.error).toBe('not_in_waiting_room');
    await gus.expectNothing('moderation', 'accepted');
    expect((await join(first.moderator, 'Alice 2')).joinSuccess.moderation!.waiting_room_participants).toEqual([]);
  });

  it('lets an accepted participant who resumes its session skip the waiting room, and not one never accepted', async () => {
    const {
      guest,
      alice,
      waiting: [gus, ida],
    } = await aliceAndWaiting('Gus', 'Ida');
    const [gusId, idaId] = [gus.id, ida.id];
    alice.command('moderation', 'accept', { target: gusId });
    await gus.next('moderation', 'accepted');
    gus.command('control', 'enter_room');
    await gus.next('control', 'join_success');

    await Promise.all([gus.close(), ida.close()]);
    await alice.next('control', 'left');
    await alice.next('moderation', 'left_waiting_room');

    const back = await openResuming(guest, gus.resumption);
    back.command('control', 'join', { display_name: 'Gus' });
    expect((await back.next()).payload).toMatchObject({ message: 'join_success', id: gusId });
    const idaBack = await openResuming(guest, ida.resumption);
    idaBack.command('control', 'join', { display_name: 'Ida' });
    expect((await idaBack.next()).payload).toEqual({ message: 'in_waiting_room' });
    expect((await alice.next('moderation', 'joined_waiting_room')).payload.id).toBe(idaId);
  });

  it('does not exist when the tariff switches the moderation module off', async () => {
    const { moderator, guest } = await room({ tariff: 'unmoderated' });
    const alice = await join(moderator, 'Alice');
    expect(alice.joinSuccess).not.toHaveProperty('moderation');
    const gus = await join(guest, 'Gus');
    expect(gus.joinSuccess.participants.map((p) => p.id)).toEqual([alice.joinSuccess.id]);
    alice.command('moderation', 'accept', { target: gus.joinSuccess.id });
    expect((await alice.next('control', 'error')).payload).toMatchObject({ error: 'invalid_namespace' });
  });
});

describe.skipIf(!redisUrl)("the room's state in Redis", () => {
  it('is gone once a guest who waited alone has left', async () => {
    const { roomId, guest } = await room();
    const gus = await wait(guest, 'Gus');
    // `waiting_hosts` and `waiting_host_instances`: the instance of each waiting record, and the instances, for crash cleanup (control/membership-sweep.ts)
    expect(await roomKeysLeft(roomId, 0)).toEqual(
      ['waiting', 'waiting_host_instances', 'waiting_hosts'].map((name) => `convene:signaling:room:${roomId}:${name}`),
    );
    await gus.close();
    expect(await roomKeysLeft(roomId)).toEqual([]);
  });

  it('is gone once everyone has left: those who waited, were let in, or were let in and never came', async () => {
    const {
      roomId,
      alice,
      waiting: [gus, ida, uwe],
    } = await aliceAndWaiting('Gus', 'Ida', 'Uwe');
    for (const client of [ida, uwe]) {
      alice.command('moderation', 'accept', { target: client.id });
      await client.next('moderation', 'accepted');
    }
    ida.command('control', 'enter_room');
    await ida.next('control', 'join_success');
    const key = (name: string) => `convene:signaling:room:${roomId}:${name}`;
    // the members' versions (`changes`, `gone`, `versions`) let an instance read only what changed (membership.redis.ts)
    const names = ['accepted', 'changes', 'host_instances', 'hosts', 'members', 'started_at', 'versions', 'waiting', 'waiting_host_instances', 'waiting_hosts'];
    expect(await roomKeysLeft(roomId, 0)).toEqual(names.map(key));

    await Promise.all([gus.close(), uwe.close(), ida.close(), alice.close()]);
    expect(await roomKeysLeft(roomId)).toEqual([]);
  });
});
