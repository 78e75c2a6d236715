/**
 * The `control` namespace over real sockets: `join` and its answer `join_success` for every kind of
 * participant (the room owner, an event invitee with the moderator role and one with the user role,
 * an invite-code guest, a phone caller), `joined` and `left` to the others of the room and to nobody
 * else, the display-name rule, `already_joined`, `enter_room` without a waiting room, the tariff's
 * participant limit at its edge and its time limit (with Redis, across two instances too),
 * `event_info`, and a stranger to the room, who gets no ticket. Every frame a client gets is checked
 * against the contract by the test client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SignalingClient, Starter } from '../../support/signaling-client.js';
import { createEventFor, dbOf } from '../../support/rooms.js';
import { redisUrl, startRoom } from '../../support/signaling.js';
import { useSignalingRooms } from '../../support/signaling-rooms.js';
import type { TestApp } from '../../support/test-app.js';

/** Tariffs a room gets through its owner: `pair` lets two in, `brief` closes the room after 1 s, `hour` after an hour. */
const { app, room, join, open, openResuming, callIn, login } = useSignalingRooms({
  pair: { quotas: { room_participant_limit: 2 } },
  brief: { quotas: { room_time_limit_secs: 1 } },
  hour: { quotas: { room_time_limit_secs: 3600 } },
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const idsOf = (participants: Array<{ id: string }>) => participants.map((p) => p.id).sort();

/** The `joined` of one participant, skipping (and dropping) earlier ones. */
async function joinedOf(client: SignalingClient, id: string) {
  for (;;) {
    const joined = await client.next('control', 'joined');
    if (joined.payload.id === id) return joined;
  }
}

describe('join', () => {
  it("answers the room owner with join_success: its id, name, avatar, moderator role, the room's tariff and no one else", async () => {
    const { roomId, owner, moderator } = await room();
    const alice = await join(moderator, '  Alice Hansen ');
    const { data: tariff } = await app.api(owner.accessToken).GET('/rooms/{room_id}/tariff', { params: { path: { room_id: roomId } } });
    const { data: me } = await app.api(owner.accessToken).GET('/users/me');
    expect(alice.joinSuccess).toEqual({
      message: 'join_success',
      id: expect.stringMatching(UUID),
      display_name: 'Alice Hansen',
      avatar_url: me!.avatar_url,
      role: 'moderator',
      is_room_owner: true,
      closes_at: null,
      tariff,
      participants: [],
      chat: {
        enabled: true,
        room_history: [],
        groups_history: [],
        private_history: [],
        last_seen_timestamp_global: null,
        last_seen_timestamps_group: {},
        last_seen_timestamps_private: {},
      },
      moderation: { raise_hands_enabled: true, waiting_room_enabled: false, waiting_room_participants: [] },
    });
    await alice.expectNothing(undefined, undefined, 100);
  });

  it('gives each kind of participant its role and participation kind, and lists the earlier ones to each newcomer', async () => {
    const { roomId, moderator, guest, invitee } = await room();
    const alice = await join(moderator, 'Alice');
    const mona = await join(await invitee('moderator'), 'Mona');
    const ulla = await join(await invitee('user'), 'Ulla');
    const gus = await join(guest, 'Gus');
    const phone = await callIn(roomId);
    phone.command('control', 'join', { display_name: '+49 30 1234' });
    const called = (await phone.next('control', 'join_success')).payload;

    expect([mona, ulla, gus].map((c) => [c.joinSuccess.role, c.joinSuccess.is_room_owner])).toEqual([
      ['moderator', false],
      ['user', false],
      ['guest', false],
    ]);
    expect([called.role, called.is_room_owner]).toEqual(['guest', false]);
    // the waiting room is for moderators only
    expect(mona.joinSuccess.moderation).toEqual({ raise_hands_enabled: true, waiting_room_enabled: false, waiting_room_participants: [] });
    for (const other of [ulla.joinSuccess, gus.joinSuccess, called]) expect(other.moderation).toEqual({ raise_hands_enabled: true });
    expect(gus.joinSuccess).not.toHaveProperty('avatar_url');

    // each newcomer sees those who came before it, oldest first, never itself
    expect(called.participants.map((p: { control: { display_name: string } }) => p.control.display_name)).toEqual(['Alice', 'Mona', 'Ulla', 'Gus']);
    expect(gus.joinSuccess.participants.map((p) => p.id)).toEqual([alice.joinSuccess.id, mona.joinSuccess.id, ulla.joinSuccess.id]);
    const kinds = Object.fromEntries(
      called.participants.map((p: any) => [p.control.display_name, [p.control.role, p.control.participation_kind, p.control.is_room_owner]]),
    );
    expect(kinds).toEqual({
      Alice: ['moderator', 'user', true],
      Mona: ['moderator', 'user', false],
      Ulla: ['user', 'user', false],
      Gus: ['guest', 'guest', false],
    });
    const listedGus = called.participants.find((p: { id: string }) => p.id === gus.joinSuccess.id);
    expect(listedGus).toEqual({
      id: gus.joinSuccess.id,
      control: {
        display_name: 'Gus',
        role: 'guest',
        participation_kind: 'guest',
        hand_is_up: false,
        joined_at: expect.any(String),
        left_at: null,
        hand_updated_at: listedGus?.control.joined_at,
        is_room_owner: false,
      },
    });

    // the caller's arrival, as everyone else sees it
    for (const client of [alice, mona, ulla, gus]) {
      const joined = await joinedOf(client, called.id);
      expect(joined.payload).toEqual({
        message: 'joined',
        id: called.id,
        control: {
          display_name: '+49 30 1234',
          role: 'guest',
          participation_kind: 'sip',
          hand_is_up: false,
          joined_at: joined.payload.control.joined_at,
          left_at: null,
          hand_updated_at: joined.payload.control.joined_at,
          is_room_owner: false,
        },
      });
      expect(Date.parse(joined.payload.control.joined_at)).toBeLessThanOrEqual(Date.parse(joined.timestamp));
    }
  });

  it('tells the others of the room, not the joiner and not another room, who joined and who left', async () => {
    const first = await room();
    const second = await room();
    const alice = await join(first.moderator, 'Alice');
    const stranger = await join(second.moderator, 'Stranger');
    const bob = await join(first.guest, 'Bob');

    const joined = await alice.next('control', 'joined');
    expect(joined.payload.id).toBe(bob.joinSuccess.id);
    expect(joined.payload.control.display_name).toBe('Bob');
    expect(bob.joinSuccess.participants).toEqual([{ id: alice.joinSuccess.id, control: expect.objectContaining({ display_name: 'Alice' }) }]);
    await bob.expectNothing('control', 'joined');

    await bob.close();
    expect((await alice.next('control', 'left')).payload).toEqual({ message: 'left', id: bob.joinSuccess.id, reason: 'quit' });
    await stranger.expectNothing('control');
    expect(stranger.joinSuccess.participants).toEqual([]);

    // the room now lists only Alice to a newcomer
    const carl = await join(first.guest, 'Carl');
    expect(idsOf(carl.joinSuccess.participants)).toEqual([alice.joinSuccess.id]);
  });

  it('lets a guest show an avatar of its own when it is a web address, and a user only its profile one', async () => {
    const { owner, moderator, guest } = await room();
    const avatar = 'https://images.example.org/gus.png';
    const joinWith = async (starter: Starter, name: string, avatarUrl: string) => {
      const client = await open(starter);
      client.command('control', 'join', { display_name: name, avatar_url: avatarUrl });
      return (await client.next('control', 'join_success')).payload;
    };
    expect((await joinWith(guest, 'Gus', avatar)).avatar_url).toBe(avatar);
    expect(await joinWith(guest, 'Eve', 'javascript:alert(1)')).not.toHaveProperty('avatar_url');
    expect(await joinWith(guest, 'Ida', 'not a url')).not.toHaveProperty('avatar_url');
    const { data: me } = await app.api(owner.accessToken).GET('/users/me');
    const alice = await joinWith(moderator, 'Alice', avatar);
    expect(alice.avatar_url).toBe(me!.avatar_url);
    // and the others see the avatars as shown
    expect(alice.participants.map((p: any) => p.control.avatar_url)).toEqual([avatar, undefined, undefined]);
  });
});

describe('the display name', () => {
  it.each([
    ['empty', ''],
    ['spaces only', '   '],
    ['101 characters after trimming', ` ${'x'.repeat(101)} `],
  ])('is refused with invalid_username when %s, and no join happens', async (_what, name) => {
    const { moderator, guest } = await room();
    const alice = await join(moderator, 'Alice');
    const bob = await open(guest);
    bob.command('control', 'join', { display_name: name });
    expect((await bob.next('control', 'error')).payload).toEqual({ message: 'error', error: 'invalid_username' });
    await alice.expectNothing('control', 'joined');
    // still not joined: a valid join now succeeds
    bob.command('control', 'join', { display_name: 'Bob' });
    expect((await bob.next('control', 'join_success')).payload.display_name).toBe('Bob');
  });

  it('takes exactly 100 characters after trimming, counting characters (not UTF-16 units)', async () => {
    const { moderator, guest } = await room();
    const name = `${'é'.repeat(49)}${'😀'.repeat(51)}`;
    expect([...name]).toHaveLength(100);
    const bob = await join(guest, `\t ${name}  `);
    expect(bob.joinSuccess.display_name).toBe(name);
    const alice = await join(moderator, 'x'.repeat(100));
    expect(alice.joinSuccess.participants[0]!.control.display_name).toBe(name);
  });
});

describe('join and enter_room out of turn', () => {
  it('answers a second join with already_joined, and changes nothing', async () => {
    const { moderator, guest } = await room();
    const alice = await join(moderator, 'Alice');
    const bob = await join(guest, 'Bob');
    await alice.next('control', 'joined');
    bob.command('control', 'join', { display_name: 'Robert' });
    expect((await bob.next('control', 'error')).payload).toEqual({ message: 'error', error: 'already_joined' });
    await alice.expectNothing('control');
  });

  it('answers enter_room with not_accepted_or_not_in_waiting_room before join, after join, and without a waiting room', async () => {
    const { moderator, guest } = await room();
    const bob = await open(guest);
    bob.command('control', 'enter_room');
    expect((await bob.next('control', 'error')).payload.error).toBe('not_accepted_or_not_in_waiting_room');
    bob.command('control', 'join', { display_name: 'Bob' });
    await bob.next('control', 'join_success');
    bob.command('control', 'enter_room');
    expect((await bob.next('control', 'error')).payload.error).toBe('not_accepted_or_not_in_waiting_room');
    const alice = await join(moderator, 'Alice');
    expect(idsOf(alice.joinSuccess.participants)).toHaveLength(1);
  });
});

describe("the tariff's participant limit", () => {
  it('lets the limit in, blocks the next one (which may try again), and lets it in once someone left', async () => {
    const { moderator, guest } = await room({ tariff: 'pair' });
    const other = await room({ tariff: 'pair' });
    const alice = await join(moderator, 'Alice');
    const bob = await join(guest, 'Bob');
    expect(alice.joinSuccess.tariff.quotas).toEqual({ room_participant_limit: 2 });

    const carl = await open(guest);
    carl.command('control', 'join', { display_name: 'Carl' });
    expect((await carl.next('control', 'join_blocked')).payload).toEqual({ message: 'join_blocked', reason: 'participant_limit_reached' });
    carl.command('control', 'join', { display_name: 'Carl' });
    await carl.next('control', 'join_blocked');
    // a blocked participant is not joined: others hear nothing, its commands elsewhere are refused
    carl.command('moderation', 'accept', { target: bob.joinSuccess.id });
    expect((await carl.next('control', 'error')).payload.error).toBe('not_yet_joined');
    await alice.next('control', 'joined'); // Bob's
    await alice.expectNothing('control', 'joined');

    // another room of the same tariff is not full
    await join(other.moderator, 'Olga');

    await bob.close();
    await alice.next('control', 'left');
    carl.command('control', 'join', { display_name: 'Carl' });
    const entered = await carl.next('control', 'join_success');
    expect(idsOf(entered.payload.participants)).toEqual([alice.joinSuccess.id]);
    expect((await alice.next('control', 'joined')).payload.id).toBe(entered.payload.id);
  });
});

describe("the tariff's time limit", () => {
  it('sets closes_at from the first join for everyone who joins later', async () => {
    const { moderator, guest } = await room({ tariff: 'hour' });
    const before = Date.now();
    const alice = await join(moderator, 'Alice');
    const closesAt = Date.parse(alice.joinSuccess.closes_at!);
    expect(closesAt).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(closesAt).toBeLessThanOrEqual(Date.now() + 3_600_000);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const bob = await join(guest, 'Bob');
    expect(bob.joinSuccess.closes_at).toBe(alice.joinSuccess.closes_at);
  });

  it('closes the room sockets with 1000 when the time is up, and a later session of the room starts anew', async () => {
    const { moderator, guest } = await room({ tariff: 'brief' });
    const other = await room();
    const alice = await join(moderator, 'Alice');
    const bob = await join(guest, 'Bob');
    const olga = await join(other.moderator, 'Olga');
    expect(bob.joinSuccess.closes_at).toBe(alice.joinSuccess.closes_at);
    const [aliceClosed, bobClosed] = await Promise.all([alice.closed, bob.closed]);
    expect([aliceClosed.code, bobClosed.code]).toEqual([1000, 1000]);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(alice.joinSuccess.closes_at!) - 5);
    await olga.expectNothing(undefined, undefined, 50);
    expect(olga.ws.readyState).toBe(olga.ws.OPEN);

    // once both have left (their sessions let go of their resumption tokens), the room is empty
    const [again] = await Promise.all([openResuming(moderator, alice.resumption), openResuming(guest, bob.resumption)]);
    again.command('control', 'join', { display_name: 'Alice' });
    const { payload: rejoined } = await again.next('control', 'join_success');
    expect(rejoined.participants).toEqual([]);
    expect(Date.parse(rejoined.closes_at!)).toBeGreaterThan(Date.parse(alice.joinSuccess.closes_at!));
  });
});

describe.skipIf(!redisUrl)("the tariff's time limit on two instances", () => {
  const two = {} as TestApp;
  beforeAll(async () => {
    Object.assign(two, await app.withConfig({}));
  });
  afterAll(() => two.close?.());

  it('counts from the first join, whichever instance it was on, and closes the room on both', async () => {
    const { moderator, guest } = await room({ tariff: 'brief' });
    const alice = await join(moderator, 'Alice', two);
    const bob = await join(guest, 'Bob');
    expect(bob.joinSuccess.closes_at).toBe(alice.joinSuccess.closes_at);
    const closed = await Promise.all([alice.closed, bob.closed]);
    expect(closed.map(({ code }) => code)).toEqual([1000, 1000]);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(alice.joinSuccess.closes_at!) - 5);
  });
});

describe('a stranger to the room', () => {
  it('gets no ticket, not even with a resumption token of the room, and the room hears nothing of it', async () => {
    const { roomId, moderator } = await room();
    const alice = await join(moderator, 'Alice');
    const stranger = await login('stranger');
    for (const body of [undefined, { resumption: alice.resumption }]) {
      const answer = await startRoom(app, roomId, { token: stranger.accessToken, body });
      expect([answer.status, answer.body.code]).toEqual([404, 'not_found']);
    }
    await alice.expectNothing(undefined, undefined, 100);
  });
});

describe('event_info', () => {
  it("is the room's event when it has one, and absent otherwise", async () => {
    const { roomId, owner, moderator, guest } = await room();
    const plain = await room();
    const eventId = await createEventFor(app, roomId, owner, { title: 'Weekly planning', is_adhoc: true });
    const alice = await join(moderator, 'Alice');
    const bob = await join(guest, 'Bob');
    for (const client of [alice, bob])
      expect(client.joinSuccess.event_info).toEqual({ id: eventId, room_id: roomId, title: 'Weekly planning', is_adhoc: true });
    expect((await join(plain.moderator, 'Olga')).joinSuccess).not.toHaveProperty('event_info');
  });

  it("carries the meeting details, the same for everyone, while the event's show_meeting_details is on", async () => {
    const { roomId, owner, moderator, guest } = await room();
    const eventId = await createEventFor(app, roomId, owner, { title: 'Weekly planning' });
    await dbOf(app).updateTable('events').set({ show_meeting_details: true }).where('id', '=', eventId).execute();
    await dbOf(app)
      .insertInto('streaming_targets')
      .values({
        room_id: roomId,
        name: 'Company channel',
        streaming_endpoint: 'rtmp://live.example.org/app',
        streaming_key: 'k3y',
        public_url: 'https://video.example.org/company',
      })
      .execute();
    const { code } = await dbOf(app).selectFrom('room_invites').select('code').where('room_id', '=', roomId).executeTakeFirstOrThrow();
    const alice = await join(moderator, 'Alice');
    const bob = await join(guest, 'Bob');
    for (const client of [alice, bob]) {
      expect(client.joinSuccess.event_info).toEqual({
        id: eventId,
        room_id: roomId,
        title: 'Weekly planning',
        is_adhoc: false,
        // no [call_in] tel here: no call_in
        meeting_details: { invite_code_id: code, streaming_links: [{ name: 'Company channel', url: 'https://video.example.org/company' }] },
      });
    }

    await dbOf(app).updateTable('events').set({ show_meeting_details: false }).where('id', '=', eventId).execute();
    const carol = await join(moderator, 'Carol');
    expect(carol.joinSuccess.event_info).toEqual({ id: eventId, room_id: roomId, title: 'Weekly planning', is_adhoc: false });
  });
});
