/**
 * Raised hands, the moderator role and the moderators' tools over real sockets (one instance; on
 * Redis when REDIS_URL is set): `control` `raise_hand`, `lower_hand`, `grant_moderator_role`,
 * `revoke_moderator_role`, and `moderation` `kick`, `ban`, `send_to_waiting_room`, `debrief`,
 * `reset_raised_hands`, `enable_raise_hands`, `disable_raise_hands`, `enable_waiting_room`,
 * `disable_waiting_room`, `change_display_name`. Who may do what (moderators; users, guests and
 * sockets not joined are refused), what each
 * participant is sent (every frame checked against the contract by the test client), the socket
 * of a removed participant closing with 1000 after its last frame, a ban written where the start
 * operation reads it (for the target's user, by the sender's), the commands' limits, a moderator's
 * order crossing its target's own close, and a tariff without the moderation module.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { connect, startTicket, type SignalingClient, type Starter } from '../../support/signaling-client.js';
import { dbOf, insertInvite, post, startInvited, startRoom } from '../../support/signaling.js';
import { useSignalingRooms, type RoomOptions } from '../../support/signaling-rooms.js';

/** `unmoderated`: a tariff without the moderation module. */
const rooms = useSignalingRooms({ unmoderated: { disabled_modules: ['moderation'] } });
const { app, open, openResuming, join } = rooms;

/** The user behind the room's event invitee of that role (`invitee(role)` creates one per role and room here). */
async function inviteeUser(roomId: string, role: 'moderator' | 'user') {
  const { invitee } = await dbOf(app)
    .selectFrom('event_invites')
    .innerJoin('events', 'events.id', 'event_invites.event_id')
    .select('event_invites.invitee')
    .where('events.room_id', '=', roomId)
    .where('event_invites.role', '=', role)
    .executeTakeFirstOrThrow();
  return invitee;
}

type Joined = Awaited<ReturnType<typeof join>>;

/** The invite code of the room's guests. */
const codeOf = (room: { guest: Starter }) => (room.guest as { inviteCode: string }).inviteCode;

async function codeIsActive(room: { guest: Starter }) {
  const { active } = await dbOf(app).selectFrom('room_invites').select('active').where('code', '=', codeOf(room)).executeTakeFirstOrThrow();
  return active;
}

/** Owner Alice, user Ulla and guest Gus in a fresh room, each having seen the others join. */
async function trio(options: RoomOptions = {}) {
  const room = await rooms.room(options);
  const ullaStarter = await room.invitee('user');
  const alice = await join(room.moderator, 'Alice');
  const ulla = await join(ullaStarter, 'Ulla');
  const gus = await join(room.guest, 'Gus');
  await alice.next('control', 'joined');
  await alice.next('control', 'joined');
  await ulla.next('control', 'joined');
  return { room, ullaStarter, alice, ulla, gus, idOf: (client: Joined) => client.joinSuccess.id };
}

/** Opens and joins a participant who must wait; returns its socket once it got `in_waiting_room`. */
async function wait(starter: Starter, name: string) {
  const client = await open(starter);
  client.command('control', 'join', { display_name: name });
  expect((await client.next()).payload).toEqual({ message: 'in_waiting_room' });
  return client;
}

/** The next `update` of one participant, skipping others'. */
async function updateOf(client: SignalingClient, id: string) {
  for (;;) {
    const { payload } = await client.next('control', 'update');
    if (payload.id === id) return payload;
  }
}

/**
 * Joins once the room has emptied: the departures of sockets just closed are over when a joiner
 * finds nobody there (until then it leaves and tries again).
 */
async function joinEmptied(starter: Starter, name: string) {
  for (let attempt = 0; ; attempt++) {
    const client = await join(starter, name);
    if (client.joinSuccess.participants.length === 0) return client;
    await client.close();
    if (attempt === 100) throw new Error('the room did not empty');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The next `joined_waiting_room` of the participant with that display name, skipping others'. */
async function arrivalOf(client: SignalingClient, displayName: string) {
  for (;;) {
    const { payload } = await client.next('moderation', 'joined_waiting_room');
    if (payload.control.display_name === displayName) return payload;
  }
}

describe('raised hands', () => {
  it("go up and down with update to the others, and a later joiner's join_success lists them", async () => {
    const { room, alice, ulla, gus, idOf } = await trio();
    ulla.command('control', 'raise_hand');
    for (const other of [alice, gus]) {
      const update = await updateOf(other, idOf(ulla));
      expect(update.control).toMatchObject({ display_name: 'Ulla', role: 'user', hand_is_up: true });
      expect(Date.parse(update.control.hand_updated_at)).toBeGreaterThanOrEqual(Date.parse(update.control.joined_at));
    }
    const late = await join(room.guest, 'Late');
    expect(late.joinSuccess.participants.find((p) => p.id === idOf(ulla))!.control.hand_is_up).toBe(true);

    ulla.command('control', 'lower_hand');
    for (const other of [alice, gus, late]) expect((await updateOf(other, idOf(ulla))).control.hand_is_up).toBe(false);
    await ulla.expectNothing('control', 'update');
  });

  it('are refused while disabled, lowered by disabling and by a reset, and switched back on', async () => {
    const { alice, ulla, gus, idOf } = await trio();
    gus.command('control', 'raise_hand');
    await updateOf(alice, idOf(gus));
    alice.command('moderation', 'disable_raise_hands');
    for (const client of [alice, ulla, gus]) {
      expect((await client.next('moderation', 'raise_hands_disabled')).payload).toEqual({ message: 'raise_hands_disabled', issued_by: idOf(alice) });
    }
    expect((await updateOf(alice, idOf(gus))).control.hand_is_up).toBe(false);
    ulla.command('control', 'raise_hand');
    expect((await ulla.next('control', 'error')).payload).toEqual({ message: 'error', error: 'raise_hands_disabled' });

    alice.command('moderation', 'enable_raise_hands');
    for (const client of [alice, ulla, gus]) await client.next('moderation', 'raise_hands_enabled');
    ulla.command('control', 'raise_hand');
    expect((await updateOf(gus, idOf(ulla))).control.hand_is_up).toBe(true);
    alice.command('moderation', 'reset_raised_hands', { target: [idOf(ulla)] });
    expect((await ulla.next('moderation', 'raised_hand_reset_by_moderator')).payload).toEqual({
      message: 'raised_hand_reset_by_moderator',
      issued_by: idOf(alice),
    });
    expect((await updateOf(gus, idOf(ulla))).control.hand_is_up).toBe(false);
    await gus.expectNothing('moderation', 'raised_hand_reset_by_moderator');

    gus.command('control', 'raise_hand');
    await updateOf(alice, idOf(gus));
    alice.command('moderation', 'reset_raised_hands');
    for (const client of [alice, ulla, gus]) await client.next('moderation', 'raised_hand_reset_by_moderator');
    expect((await updateOf(alice, idOf(gus))).control.hand_is_up).toBe(false);
  });

  it("are switched and reset by moderators only, and the switch is everyone's join data", async () => {
    const { room, alice, ulla, gus } = await trio();
    for (const client of [ulla, gus]) {
      for (const action of ['disable_raise_hands', 'enable_raise_hands', 'reset_raised_hands']) {
        client.command('moderation', action);
        expect((await client.next('moderation', 'error')).payload.error).toBe('insufficient_permissions');
      }
    }
    await alice.expectNothing('moderation');
    alice.command('moderation', 'disable_raise_hands');
    await alice.next('moderation', 'raise_hands_disabled');
    expect((await join(room.guest, 'Late')).joinSuccess.moderation).toEqual({ raise_hands_enabled: false });
    expect((await join(room.moderator, 'Alice 2')).joinSuccess.moderation).toEqual({
      raise_hands_enabled: false,
      waiting_room_enabled: false,
      waiting_room_participants: [],
    });
  });

  it('are never raised before entering the room', async () => {
    const room = await rooms.room({ waitingRoom: true });
    await join(room.moderator, 'Alice');
    const gus = await wait(room.guest, 'Gus');
    gus.command('control', 'raise_hand');
    expect((await gus.next('control', 'error')).payload.error).toBe('not_yet_joined');
    const fresh = await open(room.guest);
    fresh.command('control', 'lower_hand');
    expect((await fresh.next('control', 'error')).payload.error).toBe('not_yet_joined');
  });
});

describe('the moderator role', () => {
  it('granted: role_updated to the target, update to the others, and the timer and the waiting room are its', async () => {
    const { room, alice, ulla, gus, idOf } = await trio({ waitingRoom: false });
    alice.command('control', 'grant_moderator_role', { target: idOf(gus) });
    expect((await gus.next('control', 'role_updated')).payload).toEqual({ message: 'role_updated', new_role: 'moderator' });
    for (const other of [alice, ulla]) expect((await updateOf(other, idOf(gus))).control.role).toBe('moderator');
    gus.command('timer', 'start', { kind: 'stopwatch', enable_ready_check: false });
    const started = (await gus.next('timer', 'started')).payload;
    expect((await join(room.guest, 'Late')).joinSuccess.participants.find((p) => p.id === idOf(gus))!.control.role).toBe('moderator');

    alice.command('control', 'revoke_moderator_role', { target: idOf(gus) });
    expect((await gus.next('control', 'role_updated')).payload).toEqual({ message: 'role_updated', new_role: 'guest' });
    expect((await updateOf(ulla, idOf(gus))).control.role).toBe('guest');
    gus.command('timer', 'stop', { timer_id: started.timer_id });
    expect((await gus.next('timer', 'error')).payload.error).toBe('insufficient_permissions');
  });

  it('granted in a room with a waiting room: the new moderator sees who waits, and may let them in', async () => {
    const room = await rooms.room({ waitingRoom: true });
    const alice = await join(room.moderator, 'Alice');
    const mona = await join(await room.invitee('moderator'), 'Mona');
    const gus = await wait(room.guest, 'Gus');
    const { payload: waiting } = await alice.next('moderation', 'joined_waiting_room');
    await mona.next('moderation', 'joined_waiting_room');
    alice.command('control', 'revoke_moderator_role', { target: mona.joinSuccess.id });
    expect((await mona.next('control', 'role_updated')).payload.new_role).toBe('user');
    // no longer a moderator: the next arrival is none of its business
    const ida = await wait(room.guest, 'Ida');
    const { payload: idaWaiting } = await alice.next('moderation', 'joined_waiting_room');
    await mona.expectNothing('moderation', 'joined_waiting_room');

    alice.command('control', 'grant_moderator_role', { target: mona.joinSuccess.id });
    await mona.next('control', 'role_updated');
    expect((await mona.next('moderation')).payload).toEqual({ message: 'waiting_room_enabled' });
    expect((await mona.next('moderation')).payload).toEqual(waiting);
    expect((await mona.next('moderation')).payload).toEqual(idaWaiting);
    mona.command('moderation', 'accept', { target: waiting.id });
    await gus.next('moderation', 'accepted');
    await ida.expectNothing('moderation', 'accepted');
  });

  it("is changed by moderators only, for participants in the room, when something changes, and never the owner's", async () => {
    const { room, alice, ulla, gus, idOf } = await trio();
    const mona = await join(await room.invitee('moderator'), 'Mona');
    const cases: Array<[Joined, string, string, string]> = [
      [ulla, 'grant_moderator_role', idOf(gus), 'insufficient_permissions'],
      [alice, 'grant_moderator_role', randomUUID(), 'unknown_participant'],
      [alice, 'grant_moderator_role', mona.joinSuccess.id, 'nothing_to_do'],
      [alice, 'revoke_moderator_role', idOf(ulla), 'nothing_to_do'],
      [alice, 'revoke_moderator_role', randomUUID(), 'unknown_participant'],
      [mona, 'revoke_moderator_role', idOf(alice), 'target_is_room_owner'],
      [alice, 'revoke_moderator_role', idOf(alice), 'target_is_room_owner'],
    ];
    for (const [sender, action, target, error] of cases) {
      sender.command('control', action, { target });
      expect((await sender.next('control', 'error')).payload).toEqual({ message: 'error', error });
    }
    for (const client of [alice, ulla, gus, mona]) await client.expectNothing('control', 'role_updated', 50);
  });
});

describe("the moderators' commands", () => {
  it('are refused to a user, a guest and a moderator whose role was revoked, and change nothing', async () => {
    const { room, alice, ulla, gus, idOf } = await trio();
    const mona = await join(await room.invitee('moderator'), 'Mona');
    alice.command('control', 'revoke_moderator_role', { target: idOf(mona) });
    expect((await mona.next('control', 'role_updated')).payload.new_role).toBe('user');
    for (const sender of [ulla, gus, mona]) {
      const target = sender === gus ? idOf(ulla) : idOf(gus);
      const commands: Array<[string, string, Record<string, unknown>]> = [
        ['control', 'grant_moderator_role', { target }],
        ['control', 'revoke_moderator_role', { target: idOf(alice) }],
        ['moderation', 'accept', { target }],
        ['moderation', 'kick', { target }],
        ['moderation', 'ban', { target }],
        ['moderation', 'send_to_waiting_room', { target }],
        ['moderation', 'debrief', { kick_scope: 'all' }],
        ['moderation', 'reset_raised_hands', {}],
        ['moderation', 'enable_raise_hands', {}],
        ['moderation', 'disable_raise_hands', {}],
        ['moderation', 'enable_waiting_room', {}],
        ['moderation', 'disable_waiting_room', {}],
        ['moderation', 'change_display_name', { target: idOf(gus), new_name: 'Renamed' }],
      ];
      for (const [namespace, action, fields] of commands) {
        sender.command(namespace, action, fields);
        expect((await sender.next(namespace, 'error')).payload, action).toEqual({ message: 'error', error: 'insufficient_permissions' });
      }
    }
    for (const client of [alice, ulla, gus, mona]) {
      await client.expectNothing('moderation', undefined, 0);
      await client.expectNothing('control', 'left', 0);
      await client.expectNothing('control', 'role_updated', 0);
    }
    expect(await dbOf(app).selectFrom('room_bans').selectAll().where('room_id', '=', room.roomId).execute()).toEqual([]);
    // everyone is still in the room, hands may be raised, and the waiting room is off
    const late = await join(room.guest, 'Late');
    expect(late.joinSuccess.participants.map((p) => p.id).sort()).toEqual([alice, ulla, gus, mona].map(idOf).sort());
    expect(late.joinSuccess.participants.find((p) => p.id === idOf(gus))!.control.display_name).toBe('Gus');
    expect(late.joinSuccess.moderation).toEqual({ raise_hands_enabled: true });
  });

  it('are not_yet_joined for a socket that has not joined, and act on nobody', async () => {
    const { room, alice, gus, idOf } = await trio();
    const stranger = await open(room.moderator);
    for (const [action, fields] of [
      ['enable_waiting_room', {}],
      ['disable_waiting_room', {}],
      ['change_display_name', { target: idOf(gus), new_name: 'Renamed' }],
    ] as const) {
      stranger.command('moderation', action, fields);
      expect((await stranger.next('control', 'error')).payload, action).toEqual({ message: 'error', error: 'not_yet_joined' });
    }
    await alice.expectNothing('moderation', undefined, 50);
    await gus.expectNothing('moderation', undefined, 0);
  });
});

describe('kick', () => {
  it('sends the target kicked as its last frame, closes its socket with 1000, and tells the others', async () => {
    const { room, alice, ulla, gus, idOf } = await trio();
    alice.command('moderation', 'kick', { target: idOf(gus) });
    expect((await gus.next('moderation', 'kicked')).payload).toEqual({ message: 'kicked' });
    expect((await gus.closed).code).toBe(1000);
    expect(gus.received.at(-1)!.payload).toEqual({ message: 'kicked' });
    for (const other of [alice, ulla]) expect((await other.next('control', 'left')).payload).toEqual({ message: 'left', id: idOf(gus), reason: 'kicked' });
    // not banned: the guest comes back
    const back = await join(room.guest, 'Gus again');
    expect(back.joinSuccess.participants.map((p) => p.id).sort()).toEqual([idOf(alice), idOf(ulla)].sort());
  });

  it('is refused for the owner, targets not in the room, and senders who are no moderators', async () => {
    const { room, alice, ulla, gus, idOf } = await trio();
    const mona = await join(await room.invitee('moderator'), 'Mona');
    mona.command('moderation', 'kick', { target: idOf(alice) });
    expect((await mona.next('moderation', 'error')).payload.error).toBe('cannot_kick_room_owner');
    mona.command('moderation', 'kick', { target: randomUUID() });
    expect((await mona.next('moderation', 'error')).payload.error).toBe('unknown_participant');
    ulla.command('moderation', 'kick', { target: idOf(gus) });
    expect((await ulla.next('moderation', 'error')).payload.error).toBe('insufficient_permissions');
    for (const client of [alice, ulla, gus]) await client.expectNothing('control', 'left', 50);
  });
});

describe('ban', () => {
  it('ends every session of the user in the room, and keeps it from starting the room again', async () => {
    const { room, ullaStarter, alice, ulla, gus, idOf } = await trio();
    const ulla2 = await join(ullaStarter, 'Ulla on the phone');
    await alice.next('control', 'joined');
    alice.command('moderation', 'ban', { target: idOf(ulla) });
    for (const session of [ulla, ulla2]) {
      expect((await session.next('moderation', 'banned')).payload).toEqual({ message: 'banned' });
      expect((await session.closed).code).toBe(1000);
      expect(session.received.at(-1)!.payload).toEqual({ message: 'banned' });
    }
    const lefts = [await gus.next('control', 'left'), await gus.next('control', 'left')].map((f) => [f.payload.id, f.payload.reason]);
    expect(lefts.sort()).toEqual(
      [
        [idOf(ulla), 'banned'],
        [ulla2.joinSuccess.id, 'banned'],
      ].sort(),
    );

    const bans = await dbOf(app).selectFrom('room_bans').select(['user_id', 'created_by']).where('room_id', '=', room.roomId).execute();
    expect(bans).toEqual([{ user_id: await inviteeUser(room.roomId, 'user'), created_by: room.owner.id }]);
    const token = (ullaStarter as { token: string }).token;
    expect((await startRoom(app, room.roomId, { token })).status).toBe(404);
    expect((await startRoom(app, room.roomId, { token, body: { resumption: ulla.resumption } })).status).toBe(404);
    // the room goes on
    expect((await join(room.guest, 'Late')).joinSuccess.participants.map((p) => p.id).sort()).toEqual([idOf(alice), idOf(gus)].sort());
  });

  it('refuses a ticket the user got before the ban at the socket opening, as a used one', async () => {
    const { ullaStarter, alice, ulla, idOf } = await trio();
    const { ticket } = await startTicket(app, ullaStarter);
    alice.command('moderation', 'ban', { target: idOf(ulla) });
    await ulla.closed;
    await expect(connect(app, ticket)).rejects.toThrow(/upgrade refused with 401: .*"code":"invalid_ticket"/);
  });

  it("by a moderator who is not the owner is that moderator's, and ends the user's waiting and unjoined sessions too", async () => {
    const room = await rooms.room({ waitingRoom: true });
    const alice = await join(room.moderator, 'Alice');
    const mona = await join(await room.invitee('moderator'), 'Mona');
    const ullaStarter = await room.invitee('user');
    const ulla = await wait(ullaStarter, 'Ulla');
    mona.command('moderation', 'accept', { target: (await arrivalOf(mona, 'Ulla')).id });
    await ulla.next('moderation', 'accepted');
    ulla.command('control', 'enter_room');
    const { id: ullaId } = (await ulla.next('control', 'join_success')).payload;
    const waiting = await wait(ullaStarter, 'Ulla waiting');
    const { id: waitingId } = await arrivalOf(alice, 'Ulla waiting');
    const unjoined = await open(ullaStarter);

    mona.command('moderation', 'ban', { target: ullaId });
    for (const session of [ulla, waiting, unjoined]) {
      expect((await session.next('moderation', 'banned')).payload).toEqual({ message: 'banned' });
      expect((await session.closed).code).toBe(1000);
      expect(session.received.at(-1)!.payload).toEqual({ message: 'banned' });
    }
    expect((await alice.next('control', 'left')).payload).toEqual({ message: 'left', id: ullaId, reason: 'banned' });
    for (;;) if ((await alice.next('moderation', 'left_waiting_room')).payload.id === waitingId) break;
    const bans = await dbOf(app).selectFrom('room_bans').select(['user_id', 'created_by']).where('room_id', '=', room.roomId).execute();
    expect(bans).toEqual([{ user_id: await inviteeUser(room.roomId, 'user'), created_by: await inviteeUser(room.roomId, 'moderator') }]);
    await alice.expectNothing('control', 'left');
  });

  it('refuses callers (cannot_ban_guest) and the owner, and bans nobody', async () => {
    const { room, alice, gus, idOf } = await trio();
    const mona = await join(await room.invitee('moderator'), 'Mona');
    const phone = await rooms.callIn(room.roomId);
    phone.command('control', 'join', { display_name: '+49 30 1234' });
    const { id: phoneId } = (await phone.next('control', 'join_success')).payload;
    for (const [target, error] of [
      [phoneId, 'cannot_ban_guest'],
      [idOf(alice), 'cannot_ban_room_owner'],
      [randomUUID(), 'unknown_participant'],
    ]) {
      mona.command('moderation', 'ban', { target });
      expect((await mona.next('moderation', 'error')).payload.error).toBe(error);
    }
    expect(await dbOf(app).selectFrom('room_bans').selectAll().where('room_id', '=', room.roomId).execute()).toEqual([]);
    expect(await codeIsActive(room)).toBe(true);
    for (const client of [gus, phone]) await client.expectNothing('moderation', 'banned', 50);
  });

  it('keeps the banned user out of what its invitation opened, also when it comes as a guest with its token', async () => {
    const { room, ullaStarter, alice, ulla, idOf } = await trio();
    const { token } = ullaStarter as { token: string };
    const code = codeOf(room);
    const reads = ['', '/invites', '/event', '/tariff', '/assets', '/streaming_targets'].map((path) => `/v1/rooms/${room.roomId}${path}`);
    for (const path of reads) expect((await app.request('GET', path, { headers: { authorization: `Bearer ${token}` } })).status, path).toBe(200);

    alice.command('moderation', 'ban', { target: idOf(ulla) });
    await ulla.closed;
    for (const path of reads) expect((await app.request('GET', path, { headers: { authorization: `Bearer ${token}` } })).status, path).toBe(404);
    expect((await post(app, `/v1/rooms/${room.roomId}/start_invited`, { token, body: { invite_code: code } })).status).toBe(404);
    expect((await post(app, '/v1/invite/verify', { token, body: { invite_code: code } })).status).toBe(404);
    // without its token it is an anonymous guest, which nothing tells apart (README "Bans")
    expect((await post(app, `/v1/rooms/${room.roomId}/start_invited`, { body: { invite_code: code } })).status).toBe(200);
  });
});

describe('ban of a guest', () => {
  it('ends its session and deactivates the code it came in with: nobody starts with the code again, a ticket got before included', async () => {
    const { room, alice, ulla, gus, idOf } = await trio();
    const gia = await join(room.guest, 'Gia'); // a guest on the same code
    const { ticket } = await startTicket(app, room.guest);
    alice.command('moderation', 'ban', { target: idOf(gus) });
    expect((await gus.next('moderation', 'banned')).payload).toEqual({ message: 'banned' });
    expect((await gus.closed).code).toBe(1000);
    expect(gus.received.at(-1)!.payload).toEqual({ message: 'banned' });
    for (const other of [alice, ulla, gia]) expect((await other.next('control', 'left')).payload).toEqual({ message: 'left', id: idOf(gus), reason: 'banned' });

    expect(await codeIsActive(room)).toBe(false);
    expect(await dbOf(app).selectFrom('room_bans').selectAll().where('room_id', '=', room.roomId).execute()).toEqual([]);
    const code = codeOf(room);
    expect((await startInvited(app, room.roomId, { invite_code: code })).status).toBe(404);
    expect((await startInvited(app, room.roomId, { invite_code: code, resumption: gus.resumption })).status).toBe(404);
    await expect(connect(app, ticket)).rejects.toThrow(/upgrade refused with 401: .*"code":"invalid_ticket"/);
    // the other guest of the code stays, until it leaves: then it cannot come back with that code either
    await gia.expectNothing('moderation', 'banned', 50);
    await gia.close();
    expect((await alice.next('control', 'left')).payload).toEqual({ message: 'left', id: idOf(gia), reason: 'quit' });
    expect((await startInvited(app, room.roomId, { invite_code: code, resumption: gia.resumption })).status).toBe(404);
    // another code of the room, and its owner's, still open it
    const other = { roomId: room.roomId, inviteCode: await insertInvite(app, room.roomId, room.owner) };
    expect((await join(other, 'Newcomer')).joinSuccess.participants.map((p) => p.id).sort()).toEqual([idOf(alice), idOf(ulla)].sort());
  });

  it('by a guest made moderator works alike, and a code deactivated meanwhile stays so', async () => {
    const { room, alice, gus, idOf } = await trio();
    const gia = await join(room.guest, 'Gia');
    alice.command('control', 'grant_moderator_role', { target: idOf(gia) });
    await gia.next('control', 'role_updated');
    await dbOf(app).updateTable('room_invites').set({ active: false }).where('code', '=', codeOf(room)).execute();
    gia.command('moderation', 'ban', { target: idOf(gus) });
    await gus.next('moderation', 'banned');
    expect((await gus.closed).code).toBe(1000);
    expect(await codeIsActive(room)).toBe(false);
  });
});

describe('send_to_waiting_room', () => {
  it('moves the target to the waiting room until a moderator lets it back, and turns the waiting room on', async () => {
    const { room, alice, ulla, gus, idOf } = await trio();
    alice.command('moderation', 'send_to_waiting_room', { target: idOf(gus) });
    for (const client of [alice, ulla, gus])
      expect((await client.next('moderation', 'waiting_room_enabled')).payload).toEqual({ message: 'waiting_room_enabled' });
    expect((await gus.next('moderation', 'sent_to_waiting_room')).payload).toEqual({ message: 'sent_to_waiting_room' });
    for (const other of [alice, ulla])
      expect((await other.next('control', 'left')).payload).toEqual({ message: 'left', id: idOf(gus), reason: 'sent_to_waiting_room' });
    expect((await alice.next('moderation', 'joined_waiting_room')).payload).toMatchObject({ id: idOf(gus), control: { display_name: 'Gus' } });
    await ulla.expectNothing('moderation', 'joined_waiting_room');

    // a newcomer waits too, until the room empties
    const late = await wait(room.guest, 'Late');
    gus.command('control', 'enter_room');
    expect((await gus.next('control', 'error')).payload.error).toBe('not_accepted_or_not_in_waiting_room');
    alice.command('moderation', 'accept', { target: idOf(gus) });
    await gus.next('moderation', 'accepted');
    gus.command('control', 'enter_room');
    const again = (await gus.next('control', 'join_success')).payload;
    expect(again).toMatchObject({ id: idOf(gus), role: 'guest' });
    expect((await ulla.next('control', 'joined')).payload.id).toBe(idOf(gus));
    await late.close();
  });

  it('is refused for the owner and for targets not in the room', async () => {
    const { room, alice, idOf } = await trio();
    const mona = await join(await room.invitee('moderator'), 'Mona');
    for (const [target, error] of [
      [idOf(alice), 'cannot_send_room_owner_to_waiting_room'],
      [randomUUID(), 'unknown_participant'],
    ]) {
      mona.command('moderation', 'send_to_waiting_room', { target });
      expect((await mona.next('moderation', 'error')).payload.error).toBe(error);
    }
    await alice.expectNothing('moderation', 'waiting_room_enabled', 50);
  });
});

describe('debrief', () => {
  it('ends the sessions of the scope (session_ended, then 1000) and starts the debriefing for the others', async () => {
    const { room, alice, ulla, gus, idOf } = await trio();
    alice.command('moderation', 'debrief', { kick_scope: 'guests' });
    expect((await gus.next('moderation', 'session_ended')).payload).toEqual({ message: 'session_ended', issued_by: idOf(alice) });
    expect((await gus.closed).code).toBe(1000);
    for (const client of [alice, ulla]) {
      expect((await client.next('moderation', 'debriefing_started')).payload).toEqual({ message: 'debriefing_started', issued_by: idOf(alice) });
      expect((await client.next('control', 'left')).payload).toEqual({ message: 'left', id: idOf(gus), reason: 'kicked' });
    }
    // the guest coming back waits now
    await wait(room.guest, 'Gus again');
    expect((await alice.next('moderation', 'joined_waiting_room')).payload.control.display_name).toBe('Gus again');

    alice.command('moderation', 'debrief', { kick_scope: 'all' });
    for (const client of [alice, ulla]) {
      await client.next('moderation', 'session_ended');
      expect((await client.closed).code).toBe(1000);
    }
  });

  it('is for moderators only, and checks its scope', async () => {
    const { ulla, alice } = await trio();
    ulla.command('moderation', 'debrief', { kick_scope: 'all' });
    expect((await ulla.next('moderation', 'error')).payload.error).toBe('insufficient_permissions');
    alice.command('moderation', 'debrief', { kick_scope: 'moderators' });
    expect((await alice.next('control', 'error')).payload).toMatchObject({ error: 'invalid_message', details: { namespace: 'moderation', action: 'debrief' } });
    await ulla.expectNothing('moderation', 'session_ended', 50);
  });
});

describe("a moderator's order crossing its target's own close", () => {
  const orders = [
    ['moderation', 'kick', ['kicked', 'quit']],
    ['moderation', 'ban', ['banned', 'quit']],
    ['moderation', 'send_to_waiting_room', ['sent_to_waiting_room', 'quit']],
    ['control', 'grant_moderator_role', ['quit']],
  ] as const;
  // sent with the close, the order mostly finds the target still there; sent after it, gone or going
  const cases = orders.flatMap((order) => (['with', 'after'] as const).map((when) => [...order, when] as const));

  it.each(cases)(
    '%s %s sent %s the close: the others see the target leave once; it is neither in the room nor waiting',
    async (namespace, action, reasons, when) => {
      const { room, ullaStarter, alice, ulla, gus, idOf } = await trio();
      if (when === 'after') await ulla.close();
      alice.command(namespace, action, { target: idOf(ulla) });
      if (when === 'with') await ulla.close();
      const { payload: left } = await gus.next('control', 'left');
      expect(left.id).toBe(idOf(ulla));
      expect(when === 'after' ? ['quit'] : reasons).toContain(left.reason);
      // its departure is over once its token may be used again (a banned user gets no ticket at all)
      if (action !== 'ban') await openResuming(ullaStarter, ulla.resumption);
      const late = await join(await room.invitee('moderator'), 'Max');
      expect(late.joinSuccess.participants.map((p) => p.id).sort()).toEqual([idOf(alice), idOf(gus)].sort());
      expect(late.joinSuccess.moderation!.waiting_room_participants).toEqual([]);
      await gus.expectNothing('control', 'left');
      // the only refusal possible: the target had left before the command was looked at
      for (const frame of alice.inbox) if (frame.payload.message === 'error') expect(frame.payload).toEqual({ message: 'error', error: 'unknown_participant' });
    },
  );
});

describe('enable_waiting_room and disable_waiting_room', () => {
  it('switch the waiting room for the meeting: everyone is told, those inside stay, newcomers wait or not, the room setting stays', async () => {
    const { room, alice, ulla, gus, idOf } = await trio();
    alice.command('moderation', 'enable_waiting_room');
    for (const client of [alice, ulla, gus])
      expect((await client.next('moderation', 'waiting_room_enabled')).payload).toEqual({ message: 'waiting_room_enabled' });
    await ulla.expectNothing('control', 'left', 0);

    // users and guests wait now, moderators go straight in and see who waits
    const late = await wait(room.guest, 'Late');
    const lateUser = await wait(await room.invitee('user'), 'Lu');
    const mona = await join(await room.invitee('moderator'), 'Mona');
    expect(mona.joinSuccess.moderation).toMatchObject({ waiting_room_enabled: true });
    expect(mona.joinSuccess.moderation!.waiting_room_participants!.map((p) => p.control.display_name)).toEqual(['Late', 'Lu']);
    expect(mona.joinSuccess.participants.map((p) => p.id).sort()).toEqual([alice, ulla, gus].map(idOf).sort());

    // a moderator switches it on again: told again, nothing else changes
    mona.command('moderation', 'enable_waiting_room');
    for (const client of [alice, ulla, gus, mona]) await client.next('moderation', 'waiting_room_enabled');
    await late.expectNothing('moderation', 'waiting_room_enabled', 0);

    // off: told to everyone in the room, then those waiting are let in, oldest first
    alice.command('moderation', 'disable_waiting_room');
    for (const client of [alice, ulla, gus, mona])
      expect((await client.next('moderation', 'waiting_room_disabled')).payload).toEqual({ message: 'waiting_room_disabled' });
    for (const waiting of [late, lateUser]) expect((await waiting.next('moderation')).payload).toEqual({ message: 'accepted' });
    await late.expectNothing('moderation', 'waiting_room_disabled', 0);
    const waitingIds = mona.joinSuccess.moderation!.waiting_room_participants!.map((p) => p.id);
    for (const moderator of [alice, mona]) {
      const left = [];
      for (let i = 0; i < 2; i++) left.push((await moderator.next('moderation', 'left_waiting_room')).payload.id);
      expect(left).toEqual(waitingIds);
    }
    await ulla.expectNothing('moderation', 'left_waiting_room', 0);
    late.command('control', 'enter_room');
    expect((await late.next('control', 'join_success')).payload.display_name).toBe('Late');

    // newcomers go straight in; the room's own setting was never touched
    const later = await join(room.guest, 'Later');
    expect(later.joinSuccess.participants.map((p) => p.control.display_name)).toContain('Late');
    const [row] = await dbOf(app).selectFrom('rooms').select('waiting_room').where('id', '=', room.roomId).execute();
    expect(row!.waiting_room).toBe(false);
    await lateUser.close();
  });

  it("turn off a room's own waiting room until the room empties, and it is back for the next meeting", async () => {
    const room = await rooms.room({ waitingRoom: true });
    const alice = await join(room.moderator, 'Alice');
    expect(alice.joinSuccess.moderation).toMatchObject({ waiting_room_enabled: true });
    const gus = await wait(room.guest, 'Gus');
    await arrivalOf(alice, 'Gus');
    alice.command('moderation', 'disable_waiting_room');
    await alice.next('moderation', 'waiting_room_disabled');
    await gus.next('moderation', 'accepted');
    expect((await alice.next('moderation', 'left_waiting_room')).payload.id).toBeDefined();
    gus.command('control', 'enter_room');
    await gus.next('control', 'join_success');
    const mona = await join(await room.invitee('moderator'), 'Mona');
    expect(mona.joinSuccess.moderation).toMatchObject({ waiting_room_enabled: false, waiting_room_participants: [] });
    const straight = await join(room.guest, 'Straight');

    // the next meeting, once the room has emptied, has the room's setting again
    await Promise.all([alice, gus, mona, straight].map((client) => client.close()));
    const next = await joinEmptied(room.moderator, 'Alice again');
    expect(next.joinSuccess.moderation).toMatchObject({ waiting_room_enabled: true });
    await wait(room.guest, 'Next guest');
  });

  it('leave nobody waiting who joins while the waiting room goes off', async () => {
    const room = await rooms.room({ waitingRoom: true });
    const alice = await join(room.moderator, 'Alice');
    const joiners = await Promise.all(Array.from({ length: 12 }, () => open(room.guest)));
    joiners.forEach((joiner, i) => joiner.command('control', 'join', { display_name: `Guest ${i}` }));
    alice.command('moderation', 'disable_waiting_room');
    await alice.next('moderation', 'waiting_room_disabled');
    for (const joiner of joiners) {
      const first = (await joiner.next()).payload;
      if (first.message === 'join_success') continue;
      expect(first).toEqual({ message: 'in_waiting_room' });
      expect((await joiner.next('moderation')).payload).toEqual({ message: 'accepted' });
    }
    const mona = await join(await room.invitee('moderator'), 'Mona');
    expect(mona.joinSuccess.moderation).toMatchObject({ waiting_room_enabled: false, waiting_room_participants: [] });
  });

  it('let in a participant a moderator sent to the waiting room, and the switch holds against send_to_waiting_room only until it turns it on again', async () => {
    const { room, alice, ulla, gus, idOf } = await trio();
    alice.command('moderation', 'send_to_waiting_room', { target: idOf(gus) });
    await gus.next('moderation', 'sent_to_waiting_room');
    await arrivalOf(alice, 'Gus');
    alice.command('moderation', 'disable_waiting_room');
    await ulla.next('moderation', 'waiting_room_disabled');
    await gus.next('moderation', 'accepted');
    gus.command('control', 'enter_room');
    expect((await gus.next('control', 'join_success')).payload.id).toBe(idOf(gus));
    await join(room.guest, 'Straight in');

    alice.command('moderation', 'send_to_waiting_room', { target: idOf(gus) });
    expect((await ulla.next('moderation', 'waiting_room_enabled')).payload).toEqual({ message: 'waiting_room_enabled' });
    await gus.next('moderation', 'sent_to_waiting_room');
    await wait(room.guest, 'Waits again');
  });
});

describe('change_display_name', () => {
  it('renames a guest: display_name_changed to everyone, update to the others, and later joiners see the new name', async () => {
    const { room, alice, ulla, gus, idOf } = await trio();
    alice.command('moderation', 'change_display_name', { target: idOf(gus), new_name: '  Gus the Guest  ' });
    const changed = { message: 'display_name_changed', target: idOf(gus), issued_by: idOf(alice), old_name: 'Gus', new_name: 'Gus the Guest' };
    for (const client of [alice, ulla, gus]) expect((await client.next('moderation', 'display_name_changed')).payload).toEqual(changed);
    for (const other of [alice, ulla]) expect((await updateOf(other, idOf(gus))).control).toMatchObject({ display_name: 'Gus the Guest', role: 'guest' });
    await gus.expectNothing('control', 'update', 50);
    const late = await join(room.guest, 'Late');
    expect(late.joinSuccess.participants.find((p) => p.id === idOf(gus))!.control.display_name).toBe('Gus the Guest');

    // 100 characters as the contract counts them (code points), as with join
    const hundred = '🙂'.repeat(100);
    alice.command('moderation', 'change_display_name', { target: idOf(gus), new_name: hundred });
    expect((await gus.next('moderation', 'display_name_changed')).payload).toMatchObject({ old_name: 'Gus the Guest', new_name: hundred });
  });

  it("crossing the guest's own close brings nobody back: the others see it leave once, and nothing of it after", async () => {
    const { room, alice, ulla, gus, idOf } = await trio();
    alice.command('moderation', 'change_display_name', { target: idOf(gus), new_name: 'Gone' });
    await gus.close();
    const { payload: left } = await ulla.next('control', 'left');
    expect(left).toEqual({ message: 'left', id: idOf(gus), reason: 'quit' });
    await ulla.expectNothing('control', 'left', 100);
    // renamed before it left, or not at all
    const aboutGus = ulla.received.filter((f) => f.payload.id === idOf(gus) || f.payload.target === idOf(gus)).map((f) => f.payload.message);
    expect([
      ['joined', 'left'],
      ['joined', 'display_name_changed', 'update', 'left'],
    ]).toContainEqual(aboutGus);
    const late = await join(room.guest, 'Late');
    expect(late.joinSuccess.participants.map((p) => p.id).sort()).toEqual([idOf(alice), idOf(ulla)].sort());
    for (const frame of alice.inbox) if (frame.payload.message === 'error') expect(frame.payload).toEqual({ message: 'error', error: 'unknown_participant' });
  });

  it('renames a caller, also for a moderator who is not the owner', async () => {
    const { room, alice } = await trio();
    const mona = await join(await room.invitee('moderator'), 'Mona');
    const phone = await rooms.callIn(room.roomId);
    phone.command('control', 'join', { display_name: '+49 30 1234' });
    const { id: phoneId } = (await phone.next('control', 'join_success')).payload;
    mona.command('moderation', 'change_display_name', { target: phoneId, new_name: 'Front desk' });
    expect((await phone.next('moderation', 'display_name_changed')).payload).toEqual({
      message: 'display_name_changed',
      target: phoneId,
      issued_by: mona.joinSuccess.id,
      old_name: '+49 30 1234',
      new_name: 'Front desk',
    });
    expect((await updateOf(alice, phoneId)).control).toMatchObject({ display_name: 'Front desk', participation_kind: 'sip' });
  });

  it('refuses registered users, targets not in the room and names breaking the rule of join, and renames nobody', async () => {
    const { room, alice, ulla, gus, idOf } = await trio();
    const mona = await join(await room.invitee('moderator'), 'Mona');
    const waiting = await rooms.room({ waitingRoom: true });
    const elsewhere = await join(waiting.moderator, 'Elsewhere');
    const cases: Array<[string, string, string]> = [
      [idOf(ulla), 'Ulla 2', 'cannot_change_name_of_registered_users'],
      [idOf(alice), 'Owner 2', 'cannot_change_name_of_registered_users'],
      [mona.joinSuccess.id, 'Mona 2', 'cannot_change_name_of_registered_users'],
      [randomUUID(), 'Nobody', 'unknown_participant'],
      [idOf(gus), '', 'invalid_display_name'],
      [idOf(gus), ' \t\n ', 'invalid_display_name'],
      [idOf(gus), 'x'.repeat(101), 'invalid_display_name'],
      [idOf(gus), '🙂'.repeat(101), 'invalid_display_name'],
    ];
    for (const [target, new_name, error] of cases) {
      mona.command('moderation', 'change_display_name', { target, new_name });
      expect((await mona.next('moderation', 'error')).payload, `${new_name} for ${target}`).toEqual({ message: 'error', error });
    }
    // a moderator of another room cannot reach this room's guest
    elsewhere.command('moderation', 'change_display_name', { target: idOf(gus), new_name: 'Hijacked' });
    expect((await elsewhere.next('moderation', 'error')).payload.error).toBe('unknown_participant');
    // a guest waiting is not in the room yet
    alice.command('moderation', 'enable_waiting_room');
    const late = await wait(room.guest, 'Late');
    const { id: lateId } = await arrivalOf(alice, 'Late');
    alice.command('moderation', 'change_display_name', { target: lateId, new_name: 'Early' });
    expect((await alice.next('moderation', 'error')).payload.error).toBe('unknown_participant');
    // a malformed command is the envelope's problem
    alice.command('moderation', 'change_display_name', { target: idOf(gus) });
    expect((await alice.next('control', 'error')).payload).toMatchObject({ error: 'invalid_message' });

    for (const client of [alice, ulla, gus, mona, late]) await client.expectNothing('moderation', 'display_name_changed', 0);
    await ulla.expectNothing('control', 'update', 0);
    const check = await join(room.moderator, 'Check');
    expect(Object.fromEntries(check.joinSuccess.participants.map((p) => [p.id, p.control.display_name]))).toMatchObject({
      [idOf(alice)]: 'Alice',
      [idOf(ulla)]: 'Ulla',
      [idOf(gus)]: 'Gus',
    });
  });
});

describe("the commands' schemas", () => {
  it('take 1 to 1000 targets for a reset, ignore unknown fields, and refuse malformed targets as invalid_message', async () => {
    const { alice, ulla, idOf } = await trio();
    const targets = (n: number) => Array.from({ length: n }, (_, i) => (i === 0 ? idOf(ulla) : randomUUID()));
    alice.command('moderation', 'reset_raised_hands', { target: targets(1000), note: 'extra' });
    await ulla.next('moderation', 'raised_hand_reset_by_moderator');
    for (const target of [targets(1001), [], 'not-a-uuid', [idOf(ulla), 'not-a-uuid']]) {
      alice.command('moderation', 'reset_raised_hands', { target });
      expect((await alice.next('control', 'error')).payload).toMatchObject({ error: 'invalid_message' });
    }
    for (const [namespace, action] of [
      ['moderation', 'kick'],
      ['moderation', 'ban'],
      ['moderation', 'send_to_waiting_room'],
      ['control', 'grant_moderator_role'],
      ['control', 'revoke_moderator_role'],
    ]) {
      alice.command(namespace!, action!, { target: 'not-a-uuid' });
      expect((await alice.next('control', 'error')).payload).toMatchObject({ error: 'invalid_message', details: { namespace, action } });
    }
    ulla.command('control', 'raise_hand', { because: 'extra fields are ignored' });
    expect((await updateOf(alice, idOf(ulla))).control.hand_is_up).toBe(true);
    await ulla.expectNothing('moderation', 'raised_hand_reset_by_moderator', 50);
  });
});

describe('a tariff without the moderation module', () => {
  it('has none of its commands (invalid_namespace), and hands may always be raised', async () => {
    const { alice, ulla, idOf } = await trio({ tariff: 'unmoderated' });
    expect(alice.joinSuccess).not.toHaveProperty('moderation');
    for (const action of ['kick', 'ban', 'send_to_waiting_room', 'debrief', 'reset_raised_hands', 'enable_raise_hands', 'disable_raise_hands']) {
      alice.command('moderation', action, { target: idOf(ulla), kick_scope: 'all' });
      expect((await alice.next('control', 'error')).payload).toMatchObject({ error: 'invalid_namespace' });
    }
    ulla.command('control', 'raise_hand');
    expect((await updateOf(alice, idOf(ulla))).control.hand_is_up).toBe(true);
    alice.command('control', 'grant_moderator_role', { target: idOf(ulla) });
    expect((await ulla.next('control', 'role_updated')).payload.new_role).toBe('moderator');
  });
});

describe('a session resumed after a grant', () => {
  it('joins with the role the room gives it', async () => {
    const { room, alice, gus, idOf } = await trio();
    alice.command('control', 'grant_moderator_role', { target: idOf(gus) });
    await gus.next('control', 'role_updated');
    await gus.close();
    const back = await openResuming(room.guest, gus.resumption);
    back.command('control', 'join', { display_name: 'Gus' });
    expect((await back.next('control', 'join_success')).payload).toMatchObject({ id: idOf(gus), role: 'guest' });
  });
});
