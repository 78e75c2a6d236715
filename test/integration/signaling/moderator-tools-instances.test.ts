/**
 * Raised hands, the moderator role and the moderators' tools across two Convene instances over one
 * database and one Redis, with real WebSocket clients on both: a moderator on one instance acts on
 * a participant whose socket is on the other (its own instance carries the order out), a role
 * granted or revoked on one instance counts on the other, every refusal (permissions, the owner's
 * protection, guests, registered users not to be renamed, absent targets) holds for targets on the
 * other instance, the room switches (raised hands disabled, the waiting room switched on or off)
 * hold on both, switching the waiting room off lets in those waiting on both (and those joining
 * meanwhile), a guest renamed on its own instance is seen renamed on both, a ban ends the user's
 * sessions on both (in the room and waiting), a guest's ban deactivates its code for both, an order crossing its target's own close leaves one
 * `left`, and nothing of it stays in Redis once everyone is gone. Needs REDIS_URL: without Redis each
 * instance has its own in-process bus and stores.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connect, openAndJoin, startTicket, type SignalingClient, type Starter } from '../../support/signaling-client.js';
import { dbOf, insertSipConfig, redisUrl, startCallIn, startInvited, startRoom } from '../../support/signaling.js';
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
  const idOf = (client: { joinSuccess: { id: string } }) => client.joinSuccess.id;

  /** The next `update` of one participant, skipping others'. */
  async function updateOf(client: SignalingClient, id: string) {
    for (;;) {
      const { payload } = await client.next('control', 'update');
      if (payload.id === id) return payload;
    }
  }

  /** The user behind the room's event invitee of that role (`invitee(role)` creates one per role and room here). */
  async function inviteeUser(roomId: string, role: 'moderator' | 'user') {
    const { invitee } = await dbOf(one)
      .selectFrom('event_invites')
      .innerJoin('events', 'events.id', 'event_invites.event_id')
      .select('event_invites.invitee')
      .where('events.room_id', '=', roomId)
      .where('event_invites.role', '=', role)
      .executeTakeFirstOrThrow();
    return invitee;
  }

  /** The next `left` of one participant, skipping others'. */
  async function leftOf(client: SignalingClient, id: string) {
    for (;;) {
      const { payload } = await client.next('control', 'left');
      if (payload.id === id) return payload;
    }
  }

  /** The next `joined_waiting_room` of the participant with that display name, skipping others'. */
  async function arrivalOf(client: SignalingClient, displayName: string) {
    for (;;) {
      const { payload } = await client.next('moderation', 'joined_waiting_room');
      if (payload.control.display_name === displayName) return payload;
    }
  }

  /** A phone caller on `app`, joined. */
  async function callerOn(app: TestApp, roomId: string) {
    const sip = await insertSipConfig(one, roomId);
    const answer = await startCallIn(app, await one.issuer.serviceToken(['call-in']), { id: sip.id, pin: sip.pin });
    expect(answer.status).toBe(200);
    const client = await connect(app, answer.body.ticket);
    opened.push(client);
    client.command('control', 'join', { display_name: '+49 30 1234' });
    return Object.assign(client, { joinSuccess: (await client.next('control', 'join_success')).payload });
  }

  const codeOf = (guest: Starter) => (guest as { inviteCode: string }).inviteCode;
  async function codeIsActive(guest: Starter) {
    const { active } = await dbOf(one).selectFrom('room_invites').select('active').where('code', '=', codeOf(guest)).executeTakeFirstOrThrow();
    return active;
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

  it("lowers a hand on one instance, seen on the other, and resets everyone's hands on both", async () => {
    const { theRoom, alice, ulla, gus } = await spread();
    ulla.command('control', 'raise_hand');
    for (const client of [alice, gus]) expect((await updateOf(client, idOf(ulla))).control.hand_is_up).toBe(true);
    ulla.command('control', 'lower_hand');
    for (const client of [alice, gus]) expect((await updateOf(client, idOf(ulla))).control.hand_is_up).toBe(false);

    alice.command('control', 'raise_hand');
    expect((await updateOf(gus, idOf(alice))).control.hand_is_up).toBe(true);
    gus.command('control', 'raise_hand');
    expect((await updateOf(alice, idOf(gus))).control.hand_is_up).toBe(true);
    alice.command('moderation', 'reset_raised_hands');
    for (const client of [alice, ulla, gus]) {
      expect((await client.next('moderation', 'raised_hand_reset_by_moderator')).payload).toEqual({
        message: 'raised_hand_reset_by_moderator',
        issued_by: idOf(alice),
      });
    }
    // Ulla saw each of the two hands go up, then down
    const hands = new Map<string, boolean[]>();
    for (let i = 0; i < 4; i++) {
      const { payload } = await ulla.next('control', 'update');
      hands.set(payload.id, [...(hands.get(payload.id) ?? []), payload.control.hand_is_up]);
    }
    expect(Object.fromEntries(hands)).toEqual({ [idOf(alice)]: [true, false], [idOf(gus)]: [true, false] });
    await ulla.expectNothing('control', 'update'); // its own hand was down: nothing to tell
    const late = await join(one, theRoom.guest, 'Late');
    expect(late.joinSuccess.participants.map((p) => p.control.hand_is_up)).toEqual([false, false, false]);
  });

  it('refuses, for targets on the other instance, what it refuses on one: non-moderators, the owner, guests, absent targets, nothing to do', async () => {
    const theRoom = await room();
    const alice = await join(two, theRoom.moderator, 'Alice');
    const mona = await join(one, await theRoom.invitee('moderator'), 'Mona');
    const ulla = await join(two, await theRoom.invitee('user'), 'Ulla');
    const gus = await join(two, theRoom.guest, 'Gus');
    const gina = await join(one, theRoom.guest, 'Gina');
    const phone = await callerOn(two, theRoom.roomId);
    const everyone = [alice, mona, ulla, gus, gina, phone];

    // a user on two and a guest on one, each about someone on the other instance
    for (const [sender, target] of [
      [ulla, idOf(gina)],
      [gina, idOf(ulla)],
    ] as const) {
      const commands: Array<[string, string, Record<string, unknown>]> = [
        ['control', 'grant_moderator_role', { target }],
        ['control', 'revoke_moderator_role', { target: idOf(mona) }],
        ['moderation', 'accept', { target }],
        ['moderation', 'kick', { target }],
        ['moderation', 'ban', { target }],
        ['moderation', 'send_to_waiting_room', { target }],
        ['moderation', 'debrief', { kick_scope: 'all' }],
        ['moderation', 'reset_raised_hands', { target }],
        ['moderation', 'enable_raise_hands', {}],
        ['moderation', 'disable_raise_hands', {}],
        ['moderation', 'enable_waiting_room', {}],
        ['moderation', 'disable_waiting_room', {}],
        ['moderation', 'change_display_name', { target: sender === ulla ? target : idOf(gus), new_name: 'Renamed' }],
      ];
      for (const [namespace, action, fields] of commands) {
        sender.command(namespace, action, fields);
        expect((await sender.next(namespace, 'error')).payload, action).toEqual({ message: 'error', error: 'insufficient_permissions' });
      }
    }
    // a moderator on one, about the owner, a user and a guest on two
    const refusals: Array<[string, string, string, string]> = [
      ['moderation', 'kick', idOf(alice), 'cannot_kick_room_owner'],
      ['moderation', 'ban', idOf(alice), 'cannot_ban_room_owner'],
      ['moderation', 'send_to_waiting_room', idOf(alice), 'cannot_send_room_owner_to_waiting_room'],
      ['control', 'revoke_moderator_role', idOf(alice), 'target_is_room_owner'],
      ['control', 'grant_moderator_role', idOf(alice), 'nothing_to_do'],
      ['control', 'revoke_moderator_role', idOf(ulla), 'nothing_to_do'],
      ['moderation', 'ban', idOf(phone), 'cannot_ban_guest'],
      ['moderation', 'accept', idOf(ulla), 'not_in_waiting_room'],
      ['moderation', 'kick', randomUUID(), 'unknown_participant'],
      ['control', 'grant_moderator_role', randomUUID(), 'unknown_participant'],
      ['moderation', 'change_display_name', idOf(alice), 'cannot_change_name_of_registered_users'],
      ['moderation', 'change_display_name', idOf(ulla), 'cannot_change_name_of_registered_users'],
      ['moderation', 'change_display_name', randomUUID(), 'unknown_participant'],
    ];
    for (const [namespace, action, target, error] of refusals) {
      mona.command(namespace, action, { target, ...(action === 'change_display_name' ? { new_name: 'Renamed' } : {}) });
      expect((await mona.next(namespace, 'error')).payload, `${action} → ${error}`).toEqual({ message: 'error', error });
    }
    for (const client of everyone) {
      await client.expectNothing('moderation', undefined, 0);
      await client.expectNothing('control', 'left', 0);
      await client.expectNothing('control', 'role_updated', 0);
    }
    expect(await dbOf(one).selectFrom('room_bans').selectAll().where('room_id', '=', theRoom.roomId).execute()).toEqual([]);
    expect(await codeIsActive(theRoom.guest)).toBe(true);
    mona.command('moderation', 'change_display_name', { target: idOf(gus), new_name: ' '.repeat(3) });
    expect((await mona.next('moderation', 'error')).payload.error).toBe('invalid_display_name');
    await gus.expectNothing('moderation', 'display_name_changed', 50);
    const late = await join(one, theRoom.guest, 'Late');
    expect(late.joinSuccess.participants.map((p) => p.id).sort()).toEqual(everyone.map(idOf).sort());
    expect(late.joinSuccess.participants.map((p) => p.control.display_name).sort()).toEqual(['+49 30 1234', 'Alice', 'Gina', 'Gus', 'Mona', 'Ulla']);
    expect(late.joinSuccess.moderation).toEqual({ raise_hands_enabled: true });
  });

  it('switches the waiting room on from one instance for newcomers on both, and off from the other: those waiting on both are let in', async () => {
    const { theRoom, alice, ulla, gus } = await spread();
    const mona = await join(two, await theRoom.invitee('moderator'), 'Mona');
    alice.command('moderation', 'enable_waiting_room');
    for (const client of [alice, ulla, gus, mona]) await client.next('moderation', 'waiting_room_enabled');
    const waitOne = await askToJoin(one, theRoom.guest, 'Wanda');
    const waitTwo = await askToJoin(two, await theRoom.invitee('user'), 'Walter');
    for (const waiting of [waitOne, waitTwo]) expect((await waiting.next()).payload).toEqual({ message: 'in_waiting_room' });
    const [wanda, walter] = [await arrivalOf(alice, 'Wanda'), await arrivalOf(alice, 'Walter')];
    const late = await join(two, await theRoom.invitee('moderator'), 'Max');
    expect(late.joinSuccess.moderation).toMatchObject({ waiting_room_enabled: true });
    expect(late.joinSuccess.moderation!.waiting_room_participants!.map((p) => p.id)).toEqual([wanda.id, walter.id]);

    mona.command('moderation', 'disable_waiting_room');
    for (const client of [alice, ulla, gus, mona, late]) await client.next('moderation', 'waiting_room_disabled');
    for (const waiting of [waitOne, waitTwo]) expect((await waiting.next('moderation')).payload).toEqual({ message: 'accepted' });
    for (const moderator of [alice, mona, late]) {
      const left = [];
      for (let i = 0; i < 2; i++) left.push((await moderator.next('moderation', 'left_waiting_room')).payload.id);
      expect(left).toEqual([wanda.id, walter.id]);
    }
    for (const waiting of [waitOne, waitTwo]) {
      waiting.command('control', 'enter_room');
      await waiting.next('control', 'join_success');
    }
    const straight = await join(one, theRoom.guest, 'Straight');
    expect(straight.joinSuccess.participants.map((p) => p.id)).toEqual(expect.arrayContaining([wanda.id, walter.id]));
  });

  it('leaves nobody waiting who joins on either instance while the waiting room goes off', async () => {
    const theRoom = await room({ waitingRoom: true });
    const alice = await join(one, theRoom.moderator, 'Alice');
    const joiners = await Promise.all(Array.from({ length: 12 }, (_, i) => openAndJoin(i % 2 ? one : two, theRoom.guest, `Guest ${i}`)));
    opened.push(...joiners);
    alice.command('moderation', 'disable_waiting_room');
    await alice.next('moderation', 'waiting_room_disabled');
    for (const joiner of joiners) {
      const first = (await joiner.next()).payload;
      if (first.message === 'join_success') continue;
      expect(first).toEqual({ message: 'in_waiting_room' });
      expect((await joiner.next('moderation')).payload).toEqual({ message: 'accepted' });
    }
    const late = await join(two, await theRoom.invitee('moderator'), 'Max');
    expect(late.joinSuccess.moderation).toMatchObject({ waiting_room_enabled: false, waiting_room_participants: [] });
  });

  it('renames a guest on the other instance: display_name_changed to everyone on both, update to the others, the new name for later joiners', async () => {
    const { theRoom, alice, ulla, gus } = await spread();
    alice.command('moderation', 'change_display_name', { target: idOf(gus), new_name: 'Gustav' });
    const changed = { message: 'display_name_changed', target: idOf(gus), issued_by: idOf(alice), old_name: 'Gus', new_name: 'Gustav' };
    for (const client of [alice, ulla, gus]) expect((await client.next('moderation', 'display_name_changed')).payload).toEqual(changed);
    for (const client of [alice, ulla]) expect((await updateOf(client, idOf(gus))).control.display_name).toBe('Gustav');
    for (const app of [one, two]) {
      const late = await join(app, theRoom.guest, 'Late');
      expect(late.joinSuccess.participants.find((p) => p.id === idOf(gus))!.control.display_name).toBe('Gustav');
    }
  });

  it('lets a moderator granted on the other instance act on this one, and not once revoked', async () => {
    const { theRoom, alice, ulla, gus } = await spread();
    const late = await join(one, theRoom.guest, 'Late');
    alice.command('control', 'grant_moderator_role', { target: idOf(ulla) });
    await ulla.next('control', 'role_updated');
    for (const client of [alice, late]) expect((await updateOf(client, idOf(ulla))).control.role).toBe('moderator');
    ulla.command('moderation', 'kick', { target: idOf(late) });
    await late.next('moderation', 'kicked');
    expect((await late.closed).code).toBe(1000);
    for (const client of [alice, gus]) expect(await leftOf(client, idOf(late))).toEqual({ message: 'left', id: idOf(late), reason: 'kicked' });

    alice.command('control', 'revoke_moderator_role', { target: idOf(ulla) });
    expect((await ulla.next('control', 'role_updated')).payload.new_role).toBe('user');
    expect((await updateOf(alice, idOf(ulla))).control.role).toBe('user');
    for (const [namespace, action, fields] of [
      ['moderation', 'kick', { target: idOf(alice) }],
      ['moderation', 'disable_raise_hands', {}],
      ['control', 'grant_moderator_role', { target: idOf(gus) }],
    ] as const) {
      ulla.command(namespace, action, fields);
      expect((await ulla.next(namespace, 'error')).payload).toEqual({ message: 'error', error: 'insufficient_permissions' });
    }
    for (const client of [alice, gus]) await client.expectNothing('moderation', 'raise_hands_disabled', 0);
    await gus.expectNothing('control', 'role_updated');
  });

  it('grants the moderator role to a participant on the other instance: the timer, the waiting room and its events follow', async () => {
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
    for (const client of [alice, ulla, late])
      expect((await client.next('control', 'left')).payload).toEqual({ message: 'left', id: idOf(gus), reason: 'kicked' });
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
    expect(lefts.map((left) => [left.id, left.reason]).sort()).toEqual(
      [
        [idOf(ulla), 'banned'],
        [idOf(ullaOnOne), 'banned'],
      ].sort(),
    );
    for (const app of [one, two]) expect((await startRoom(app, theRoom.roomId, { token: (ullaStarter as { token: string }).token })).status).toBe(404);
  });

  it('bans a guest on the other instance: it ends, its code opens nothing on either instance, other guests of the code stay', async () => {
    const { theRoom, alice, ulla, gus } = await spread();
    const gina = await join(one, theRoom.guest, 'Gina');
    const { ticket } = await startTicket(two, theRoom.guest);
    alice.command('moderation', 'ban', { target: idOf(gus) });
    expect((await gus.next('moderation', 'banned')).payload).toEqual({ message: 'banned' });
    expect((await gus.closed).code).toBe(1000);
    for (const client of [alice, ulla, gina]) expect(await leftOf(client, idOf(gus))).toEqual({ message: 'left', id: idOf(gus), reason: 'banned' });
    expect(await codeIsActive(theRoom.guest)).toBe(false);
    for (const app of [one, two]) {
      expect((await startInvited(app, theRoom.roomId, { invite_code: codeOf(theRoom.guest), resumption: gus.resumption })).status).toBe(404);
      await expect(connect(app, ticket)).rejects.toThrow(/upgrade refused with 401: .*"code":"invalid_ticket"/);
    }
    await gina.expectNothing('moderation', 'banned', 50);
    await ulla.expectNothing('control', 'left', 0);
  });

  it("bans a user in the room on one instance and waiting on the other: both end, with the ban the user's", async () => {
    const { theRoom, ullaStarter, alice, ulla, gus } = await spread();
    alice.command('moderation', 'send_to_waiting_room', { target: idOf(gus) }); // the waiting room is on from now
    await gus.next('moderation', 'sent_to_waiting_room');
    const waiting = await askToJoin(one, ullaStarter, 'Ulla waiting');
    expect((await waiting.next()).payload).toEqual({ message: 'in_waiting_room' });
    const { id: waitingId } = await arrivalOf(alice, 'Ulla waiting');

    alice.command('moderation', 'ban', { target: idOf(ulla) });
    for (const session of [ulla, waiting]) {
      expect((await session.next('moderation', 'banned')).payload).toEqual({ message: 'banned' });
      expect((await session.closed).code).toBe(1000);
    }
    expect(await leftOf(alice, idOf(ulla))).toEqual({ message: 'left', id: idOf(ulla), reason: 'banned' });
    for (;;) if ((await alice.next('moderation', 'left_waiting_room')).payload.id === waitingId) break;
    const bans = await dbOf(one).selectFrom('room_bans').select(['user_id', 'created_by']).where('room_id', '=', theRoom.roomId).execute();
    expect(bans).toEqual([{ user_id: await inviteeUser(theRoom.roomId, 'user'), created_by: theRoom.owner.id }]);
    for (const client of [gus, alice]) await client.close();
    expect(await roomKeysLeft(theRoom.roomId)).toEqual([]);
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
      const lefts = [];
      for (let i = 0; i < 3; i++) lefts.push((await client.next('control', 'left')).payload);
      expect(lefts.map((left) => [left.id, left.reason]).sort()).toEqual([ulla, gus, guestOnOne].map((gone) => [idOf(gone), 'kicked']).sort());
    }
    // those removed wait when they come back, on either instance
    for (const app of [one, two]) {
      const back = await askToJoin(app, theRoom.guest, 'Gus again');
      expect((await back.next()).payload).toEqual({ message: 'in_waiting_room' });
    }
  });

  it('debriefs everyone with kick_scope all, the sender too, on both instances, and leaves nothing in Redis', async () => {
    const { theRoom, alice, ulla, gus } = await spread();
    const mona = await join(two, await theRoom.invitee('moderator'), 'Mona');
    alice.command('moderation', 'debrief', { kick_scope: 'all' });
    for (const client of [alice, ulla, gus, mona]) {
      expect((await client.next('moderation', 'session_ended')).payload).toEqual({ message: 'session_ended', issued_by: idOf(alice) });
      expect((await client.closed).code).toBe(1000);
    }
    expect(await roomKeysLeft(theRoom.roomId)).toEqual([]);
  });

  const orders = [
    ['moderation', 'kick', ['kicked', 'quit']],
    ['moderation', 'ban', ['banned', 'quit']],
    ['moderation', 'send_to_waiting_room', ['sent_to_waiting_room', 'quit']],
    ['control', 'grant_moderator_role', ['quit']],
  ] as const;
  // which one wins is the race's: the order crosses Redis while the close leaves at once or a little later
  const cases = orders.flatMap((order) => [0, 5, 15].map((delayMs) => [...order, delayMs] as const));

  it.each(cases)(
    '%s %s crossing its target closing %i ms later on the other instance: one left to all, nothing left in Redis',
    async (namespace, action, reasons, delayMs) => {
      const { theRoom, alice, ulla, gus } = await spread();
      alice.command(namespace, action, { target: idOf(ulla) });
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      await ulla.close();
      const [seenByAlice, seenByGus] = [await leftOf(alice, idOf(ulla)), await leftOf(gus, idOf(ulla))];
      expect(reasons).toContain(seenByAlice.reason);
      expect(seenByGus).toEqual(seenByAlice);
      for (const client of [alice, gus]) await client.expectNothing('control', 'left');
      // the only refusal possible: the target had left before the command was looked at
      for (const frame of alice.inbox) if (frame.payload.message === 'error') expect(frame.payload).toEqual({ message: 'error', error: 'unknown_participant' });
      for (const client of [gus, alice]) await client.close();
      expect(await roomKeysLeft(theRoom.roomId)).toEqual([]);
    },
  );

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
