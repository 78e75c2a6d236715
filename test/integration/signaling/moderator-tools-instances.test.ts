/**
 * Raised hands, the moderator role and the moderators' tools across two Convene instances over one
 * database and one Redis, with real WebSocket clients on both: a moderator on one instance acts on
 * a participant whose socket is on the other (its own instance carries the order out), the room
 * switches (raised hands disabled, the waiting room turned on) hold on both, a ban ends the user's
 * sessions on both, and nothing of it stays in Redis once everyone is gone. Needs REDIS_URL:
 * without Redis each instance has its own in-process bus and stores.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openAndJoin, type SignalingClient, type Starter } from '../../support/signaling-client.js';
import { redisUrl, startRoom } from '../../support/signaling.js';
import { roomKeysLeft, useSignalingRooms } from '../../support/signaling-rooms.js';
import type { TestApp } from '../../support/test-app.js';

if (!redisUrl) console.log('REDIS_URL is not set: the two-instance moderator tool tests need Redis and are skipped in this run');

describe.skipIf(!redisUrl)("the moderators' tools across two instances", () => {
  const { app: one, room, join: joinOn } = useSignalingRooms();
  const two = {} as TestApp;
  beforeAll(async () => {
    Object.assign(two, await one.withConfig({}));
  });
  afterAll(() => two.close?.());

  const join = (app: TestApp, starter: Starter, name: string) => joinOn(starter, name, app);

  // sockets opened here rather than by `join` (which closes its own after each test)
  const opened: SignalingClient[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((client) => client.close()));
  });
  /** Opens and sends `join` on the given instance, not waiting for an answer. */
  async function askToJoin(app: TestApp, starter: Starter, name: string) {
    const client = await openAndJoin(app, starter, name);
    opened.push(client);
    return client;
  }
  type Joined = Awaited<ReturnType<typeof join>>;
  const idOf = (client: Joined) => client.joinSuccess.id;

  /** The next `update` of one participant, skipping others'. */
  async function updateOf(client: SignalingClient, id: string) {
    for (;;) {
      const { payload } = await client.next('control', 'update');
      if (payload.id === id) return payload;
    }
  }

  /** Owner Alice on instance one, user Ulla and guest Gus on instance two. */
  async function spread(options: { waitingRoom?: boolean } = {}) {
    const theRoom = await room(options);
    const ullaStarter = await theRoom.invitee('user');
    const alice = await join(one, theRoom.moderator, 'Alice');
    const ulla = await join(two, ullaStarter, 'Ulla');
    const gus = await join(two, theRoom.guest, 'Gus');
    for (let i = 0; i < 2; i++) await alice.next('control', 'joined');
    await ulla.next('control', 'joined');
    return { theRoom, ullaStarter, alice, ulla, gus };
  }

  it('raise and lower hands on one instance, seen on the other; a disabling on one lowers and refuses on the other', async () => {
    const { theRoom, alice, ulla, gus } = await spread();
    ulla.command('control', 'raise_hand');
    for (const client of [alice, gus]) expect((await updateOf(client, idOf(ulla))).control.hand_is_up).toBe(true);
    const late = await join(one, theRoom.guest, 'Late');
    expect(late.joinSuccess.participants.find((p) => p.id === idOf(ulla))!.control.hand_is_up).toBe(true);

    alice.command('moderation', 'disable_raise_hands');
    for (const client of [alice, ulla, gus, late]) await client.next('moderation', 'raise_hands_disabled');
    for (const client of [alice, gus, late]) expect((await updateOf(client, idOf(ulla))).control.hand_is_up).toBe(false);
    gus.command('control', 'raise_hand');
    expect((await gus.next('control', 'error')).payload.error).toBe('raise_hands_disabled');
    expect((await join(two, theRoom.guest, 'Later')).joinSuccess.moderation).toEqual({ raise_hands_enabled: false });

    alice.command('moderation', 'enable_raise_hands');
    await gus.next('moderation', 'raise_hands_enabled');
    gus.command('control', 'raise_hand');
    for (const client of [alice, late]) expect((await updateOf(client, idOf(gus))).control.hand_is_up).toBe(true);
    alice.command('moderation', 'reset_raised_hands', { target: idOf(gus) });
    await gus.next('moderation', 'raised_hand_reset_by_moderator');
    expect((await updateOf(late, idOf(gus))).control.hand_is_up).toBe(false);
  });

  it("grants the moderator role to a participant on the other instance: the timer, the waiting room and its events follow", async () => {
    const { alice, ulla, gus } = await spread();
    alice.command('control', 'grant_moderator_role', { target: idOf(ulla) });
    expect((await ulla.next('control', 'role_updated')).payload.new_role).toBe('moderator');
    expect((await updateOf(gus, idOf(ulla))).control.role).toBe('moderator');
    ulla.command('timer', 'start', { kind: 'stopwatch', enable_ready_check: false });
    for (const client of [alice, ulla, gus]) await client.next('timer', 'started');

    // sent to the waiting room from instance one: the new moderator on instance two sees it wait, and lets it in
    alice.command('moderation', 'send_to_waiting_room', { target: idOf(gus) });
    await gus.next('moderation', 'sent_to_waiting_room');
    for (const client of [alice, ulla]) {
      await client.next('moderation', 'waiting_room_enabled');
      expect((await client.next('control', 'left')).payload).toEqual({ message: 'left', id: idOf(gus), reason: 'sent_to_waiting_room' });
      expect((await client.next('moderation', 'joined_waiting_room')).payload.id).toBe(idOf(gus));
    }
    ulla.command('moderation', 'accept', { target: idOf(gus) });
    await gus.next('moderation', 'accepted');
    gus.command('control', 'enter_room');
    expect((await gus.next('control', 'join_success')).payload.participants.map((p: { id: string }) => p.id).sort()).toEqual([idOf(alice), idOf(ulla)].sort());

    alice.command('control', 'revoke_moderator_role', { target: idOf(ulla) });
    expect((await ulla.next('control', 'role_updated')).payload.new_role).toBe('user');
    ulla.command('moderation', 'accept', { target: idOf(gus) });
    expect((await ulla.next('moderation', 'error')).payload.error).toBe('insufficient_permissions');
  });

  it('kicks a participant on the other instance: kicked, 1000, and left to everyone on both', async () => {
    const { theRoom, alice, ulla, gus } = await spread();
    const late = await join(one, theRoom.guest, 'Late');
    alice.command('moderation', 'kick', { target: idOf(gus) });
    await gus.next('moderation', 'kicked');
    expect((await gus.closed).code).toBe(1000);
    for (const client of [alice, ulla, late]) expect((await client.next('control', 'left')).payload).toEqual({ message: 'left', id: idOf(gus), reason: 'kicked' });
  });

  it("bans a user whose sessions are on both instances: both end, and the user's starts are refused", async () => {
    const { theRoom, ullaStarter, alice, ulla, gus } = await spread();
    const ullaOnOne = await join(one, ullaStarter, 'Ulla too');
    alice.command('moderation', 'ban', { target: idOf(ulla) });
    for (const session of [ulla, ullaOnOne]) {
      await session.next('moderation', 'banned');
      expect((await session.closed).code).toBe(1000);
    }
    const lefts = [];
    for (let i = 0; i < 2; i++) lefts.push((await gus.next('control', 'left')).payload);
    expect(lefts.map((left) => [left.id, left.reason]).sort()).toEqual([[idOf(ulla), 'banned'], [idOf(ullaOnOne), 'banned']].sort());
    for (const app of [one, two]) expect((await startRoom(app, theRoom.roomId, { token: (ullaStarter as { token: string }).token })).status).toBe(404);
  });

  it('debriefs participants on both instances from either', async () => {
    const { theRoom, alice, ulla, gus } = await spread();
    const mona = await join(two, await theRoom.invitee('moderator'), 'Mona');
    const guestOnOne = await join(one, theRoom.guest, 'Gina');
    mona.command('moderation', 'debrief', { kick_scope: 'users_and_guests' });
    for (const client of [ulla, gus, guestOnOne]) {
      expect((await client.next('moderation', 'session_ended')).payload).toEqual({ message: 'session_ended', issued_by: idOf(mona) });
      expect((await client.closed).code).toBe(1000);
    }
    for (const client of [alice, mona]) {
      expect((await client.next('moderation', 'debriefing_started')).payload).toEqual({ message: 'debriefing_started', issued_by: idOf(mona) });
    }
    // those removed wait when they come back, on either instance
    for (const app of [one, two]) {
      const back = await askToJoin(app, theRoom.guest, 'Gus again');
      expect((await back.next()).payload).toEqual({ message: 'in_waiting_room' });
    }
  });

  it("leaves none of the room's switches in Redis once everyone is gone", async () => {
    const { theRoom, alice, ulla, gus } = await spread();
    alice.command('moderation', 'disable_raise_hands');
    await gus.next('moderation', 'raise_hands_disabled');
    alice.command('moderation', 'send_to_waiting_room', { target: idOf(gus) });
    await gus.next('moderation', 'sent_to_waiting_room');
    expect(await roomKeysLeft(theRoom.roomId, 0)).toContain(`convene:signaling:room:${theRoom.roomId}:settings`);
    for (const client of [gus, ulla, alice]) await client.close();
    expect(await roomKeysLeft(theRoom.roomId)).toEqual([]);
  });
});
