/**
 * The chat over real WebSockets, with users logged in through the test OIDC issuer whose ID tokens
 * carry their groups (`x_grp`): who hears a global, a group and a private message, the limits at
 * their edges and malformed commands refused, the histories and last-seen timestamps in
 * `join_success` (a latecomer, a resumed session, groups as of the latest login), moderators
 * switching the chat and clearing its history (and nobody else), a tariff without chat, and the
 * chat forgotten once the room is empty (on Redis: no key left). Every frame is checked against the
 * contract by the test client.
 */
import { describe, expect, it } from 'vitest';
import type { SignalingClient, Starter } from '../../support/signaling-client.js';
import { dbOf, insertInvite, insertRoom, inviteToRoomEvent, redisUrl } from '../../support/signaling.js';
import { roomKeysLeft, useSignalingRooms } from '../../support/signaling-rooms.js';

/** After the last expected frame, how long a stray frame is given to show up. */
const GRACE_MS = 200;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const MAX_CHARACTERS = 4096;
/** Messages kept per scope. */
const HISTORY_LIMIT = 100;
/** Groups kept per user. */
const MAX_GROUPS = 100;

const { app, join, open, openResuming } = useSignalingRooms({ no_chat: { disabled_modules: ['chat'] } });

// names unique across the file: an instance caches a token's user for a while
let logins = 0;
const login = (name: string, groups?: string[]) => app.login(`chat-${name}${++logins}`, groups ? { x_grp: groups } : {});

/**
 * A room of an owner in /dev and /ops (a moderator), with its event's invitees Dev (in /dev, role
 * `user`) and Nadia (in no group), and a guest's invite code.
 */
async function room(options: { tariff?: string } = {}) {
  const owner = await login('owner', ['/ops', '/dev']);
  const dev = await login('dev', ['/dev']);
  const nadia = await login('nadia');
  const roomId = await insertRoom(app, owner);
  await inviteToRoomEvent(app, roomId, owner, dev);
  const event = await dbOf(app).selectFrom('events').select('id').where('room_id', '=', roomId).executeTakeFirstOrThrow();
  await dbOf(app).insertInto('event_invites').values({ event_id: event.id, invitee: nadia.id, created_by: owner.id }).execute();
  if (options.tariff) await dbOf(app).updateTable('users').set({ tariff_name: options.tariff }).where('id', '=', owner.id).execute();
  const starter = (user: { accessToken: string }): Starter => ({ roomId, token: user.accessToken });
  return {
    roomId,
    dev,
    moderator: starter(owner),
    developer: starter(dev),
    nobody: starter(nadia),
    guest: { roomId, inviteCode: await insertInvite(app, roomId, owner) },
  };
}

/** The owner Alice, Dev, Nadia and the guest Gina in one room, the joins they were told of out of the way. */
async function fourInARoom() {
  const starters = await room();
  const alice = await join(starters.moderator, 'Alice');
  const dev = await join(starters.developer, 'Dev');
  const nadia = await join(starters.nobody, 'Nadia');
  const gina = await join(starters.guest, 'Gina');
  for (const client of [alice, alice, alice, dev, dev, nadia]) await client.next('control', 'joined');
  const id = (client: SignalingClient & { joinSuccess: { id: string } }) => client.joinSuccess.id;
  return { alice, dev, nadia, gina, everyone: [alice, dev, nadia, gina], starters, id };
}

const quiet = (clients: SignalingClient[], message?: string) => Promise.all(clients.map((client) => client.expectNothing('chat', message, GRACE_MS)));
const nextError = async (client: SignalingClient) => (await client.next('chat', 'error')).payload.error;

const emptyChat = {
  enabled: true,
  room_history: [],
  groups_history: [],
  private_history: [],
  last_seen_timestamp_global: null,
  last_seen_timestamps_group: {},
  last_seen_timestamps_private: {},
};

describe('join_success', () => {
  it("shows each participant the chat with an entry per group of its user's login, sorted, and none for a guest", async () => {
    const { alice, dev, nadia, gina } = await fourInARoom();
    expect(alice.joinSuccess.chat).toEqual({
      ...emptyChat,
      groups_history: [
        { name: '/dev', history: [] },
        { name: '/ops', history: [] },
      ],
    });
    expect(dev.joinSuccess.chat).toEqual({ ...emptyChat, groups_history: [{ name: '/dev', history: [] }] });
    expect(nadia.joinSuccess.chat).toEqual(emptyChat);
    expect(gina.joinSuccess.chat).toEqual(emptyChat);
  });

  it("follows the groups of the user's latest login", async () => {
    const { roomId, dev: user, developer } = await room();
    const dev = await join(developer, 'Dev');
    expect(dev.joinSuccess.chat?.groups_history).toEqual([{ name: '/dev', history: [] }]);
    // Dev logs in again, now in /qa only
    const again = await app.login(user.name, { x_grp: ['/qa'] });
    const back = await join({ roomId, token: again.accessToken }, 'Dev');
    expect(back.joinSuccess.chat?.groups_history).toEqual([{ name: '/qa', history: [] }]);
    back.command('chat', 'send_message', { scope: 'group', target: '/dev', content: 'Still dev?' });
    expect(await nextError(back)).toBe('invalid_target');
  });
});

describe('a user of many groups', () => {
  it(`is in the first ${MAX_GROUPS} of a login that named 2,000: each listed in join_success, and no other to send to`, async () => {
    const names = Array.from({ length: 2_000 }, (_, i) => `/g${String(i).padStart(4, '0')}`);
    const owner = await login('many', names);
    const alice = await join({ roomId: await insertRoom(app, owner), token: owner.accessToken }, 'Alice');
    expect(alice.joinSuccess.chat?.groups_history).toEqual(names.slice(0, MAX_GROUPS).map((name) => ({ name, history: [] })));
    alice.command('chat', 'send_message', { scope: 'group', target: names[MAX_GROUPS - 1], content: 'the last one' });
    expect((await alice.next('chat', 'message_sent')).payload.target).toBe(names[MAX_GROUPS - 1]);
    alice.command('chat', 'send_message', { scope: 'group', target: names[MAX_GROUPS], content: 'one too many' });
    expect(await nextError(alice)).toBe('invalid_target');
  });
});

describe('send_message', () => {
  it('sends a global message to everyone, the sender included', async () => {
    const { gina, everyone, id } = await fourInARoom();
    gina.command('chat', 'send_message', { scope: 'global', content: 'Hello all!' });
    for (const client of everyone) {
      expect((await client.next('chat', 'message_sent')).payload).toEqual({
        message: 'message_sent',
        id: expect.stringMatching(UUID),
        source: id(gina),
        content: 'Hello all!',
        scope: 'global',
      });
    }
    await quiet(everyone);
  });

  it("sends a group message to the group's members on their logins' groups, and nobody else", async () => {
    const { alice, dev, nadia, gina, everyone, id } = await fourInARoom();
    dev.command('chat', 'send_message', { scope: 'group', target: '/dev', content: 'Hello dev!' });
    for (const client of [alice, dev]) {
      expect((await client.next('chat', 'message_sent')).payload).toMatchObject({ source: id(dev), scope: 'group', target: '/dev', content: 'Hello dev!' });
    }
    alice.command('chat', 'send_message', { scope: 'group', target: '/ops', content: 'Hello ops!' });
    expect((await alice.next('chat', 'message_sent')).payload).toMatchObject({ target: '/ops' });
    await quiet(everyone);
    for (const client of [nadia, gina]) expect(client.received.filter((frame) => frame.namespace === 'chat')).toEqual([]);
  });

  it('refuses a group the sender is not in with invalid_target, a guest’s too', async () => {
    const { dev, nadia, gina, everyone } = await fourInARoom();
    dev.command('chat', 'send_message', { scope: 'group', target: '/ops', content: 'Hello ops!' });
    nadia.command('chat', 'send_message', { scope: 'group', target: '/dev', content: 'Hello dev!' });
    gina.command('chat', 'send_message', { scope: 'group', target: '/dev', content: 'Hello dev!' });
    for (const client of [dev, nadia, gina]) expect(await nextError(client)).toBe('invalid_target');
    await quiet(everyone, 'message_sent');
  });

  it('sends a private message to the sender and the target alone', async () => {
    const { alice, dev, nadia, gina, id } = await fourInARoom();
    gina.command('chat', 'send_message', { scope: 'private', target: id(nadia), content: 'Hello Nadia!' });
    for (const client of [gina, nadia]) {
      expect((await client.next('chat', 'message_sent')).payload).toMatchObject({
        source: id(gina),
        scope: 'private',
        target: id(nadia),
        content: 'Hello Nadia!',
      });
    }
    await quiet([alice, dev, gina, nadia]);
  });

  it('refuses a private message to itself, to nobody in the room, and to one who left', async () => {
    const { alice, dev, gina, id } = await fourInARoom();
    dev.command('chat', 'send_message', { scope: 'private', target: id(dev), content: 'Note to self' });
    expect(await nextError(dev)).toBe('invalid_target');
    dev.command('chat', 'send_message', { scope: 'private', target: '00000000-0000-4000-8000-000000000000', content: 'Anyone?' });
    expect(await nextError(dev)).toBe('invalid_target');
    await gina.close();
    await dev.next('control', 'left');
    dev.command('chat', 'send_message', { scope: 'private', target: id(gina), content: 'Still there?' });
    expect(await nextError(dev)).toBe('invalid_target');
    await quiet([alice, dev], 'message_sent');
  });

  it(`takes ${MAX_CHARACTERS} characters, counted as code points, refuses one more and an empty message`, async () => {
    const { dev, nadia } = await fourInARoom();
    const longest = '😀'.repeat(MAX_CHARACTERS);
    dev.command('chat', 'send_message', { scope: 'global', content: longest });
    expect((await nadia.next('chat', 'message_sent')).payload.content).toBe(longest);
    dev.command('chat', 'send_message', { scope: 'global', content: `${longest}!` });
    expect(await nextError(dev)).toBe('max_characters_exceeded');
    dev.command('chat', 'send_message', { scope: 'global', content: ' \n ' });
    expect(await nextError(dev)).toBe('empty_message');
    await quiet([nadia], 'message_sent');
  });

  it('answers malformed commands with invalid_message and the socket stays usable', async () => {
    const { dev, nadia } = await fourInARoom();
    const malformed = [
      { scope: 'group', content: 'to which group?' },
      { scope: 'private', target: 'nadia', content: 'not an id' },
      { scope: 'private', content: 'to whom?' },
      { scope: 'everyone', content: 'no such scope' },
      { scope: 'global' },
      { scope: 'global', content: 42 },
    ];
    for (const fields of malformed) {
      dev.command('chat', 'send_message', fields);
      expect((await dev.next('control', 'error')).payload).toMatchObject({ error: 'invalid_message', details: { namespace: 'chat', action: 'send_message' } });
    }
    dev.command('chat', 'shout', { content: 'HELLO' });
    expect((await dev.next('control', 'error')).payload).toMatchObject({ error: 'invalid_message', details: { action: 'shout' } });
    dev.command('chat', 'send_message', { scope: 'global', content: 'fine', unknown: true });
    expect((await nadia.next('chat', 'message_sent')).payload.content).toBe('fine');
  });

  it('answers chat commands before join with not_yet_joined', async () => {
    const { guest } = await room();
    const client = await open(guest);
    client.command('chat', 'send_message', { scope: 'global', content: 'Hello?' });
    expect((await client.next('control', 'error')).payload.error).toBe('not_yet_joined');
  });
});

describe('the moderators’ commands', () => {
  it('switch the chat off and on for everyone: nobody may send meanwhile, moderators neither', async () => {
    const { alice, dev, everyone, id } = await fourInARoom();
    alice.command('chat', 'disable_chat');
    for (const client of everyone) expect((await client.next('chat', 'chat_disabled')).payload).toEqual({ message: 'chat_disabled', issued_by: id(alice) });
    for (const client of [alice, dev]) {
      client.command('chat', 'send_message', { scope: 'global', content: 'Hello?' });
      expect(await nextError(client)).toBe('chat_disabled');
    }
    alice.command('chat', 'enable_chat');
    for (const client of everyone) expect((await client.next('chat', 'chat_enabled')).payload).toEqual({ message: 'chat_enabled', issued_by: id(alice) });
    dev.command('chat', 'send_message', { scope: 'global', content: 'Hello again' });
    for (const client of everyone) expect((await client.next('chat', 'message_sent')).payload.content).toBe('Hello again');
  });

  it('clear the room’s history for later joiners and keep the group history', async () => {
    const { alice, dev, everyone, starters } = await fourInARoom();
    dev.command('chat', 'send_message', { scope: 'global', content: 'Hello all!' });
    dev.command('chat', 'send_message', { scope: 'group', target: '/dev', content: 'Hello dev!' });
    for (const client of [alice, dev]) await client.next('chat', 'message_sent');
    for (const client of [alice, dev]) await client.next('chat', 'message_sent');
    alice.command('chat', 'clear_history');
    for (const client of everyone) expect((await client.next('chat', 'history_cleared')).payload).toMatchObject({ message: 'history_cleared' });
    const later = await join(starters.developer, 'Dev again');
    expect(later.joinSuccess.chat).toMatchObject({
      room_history: [],
      groups_history: [{ name: '/dev', history: [expect.objectContaining({ content: 'Hello dev!' })] }],
    });
  });

  it('are refused to a user and a guest with insufficient_permissions, changing nothing', async () => {
    const { dev, gina, nadia, everyone } = await fourInARoom();
    for (const action of ['disable_chat', 'enable_chat', 'clear_history']) {
      for (const client of [dev, gina]) {
        client.command('chat', action);
        expect(await nextError(client)).toBe('insufficient_permissions');
      }
    }
    await quiet(everyone);
    nadia.command('chat', 'send_message', { scope: 'global', content: 'still on' });
    for (const client of everyone) expect((await client.next('chat', 'message_sent')).payload.content).toBe('still on');
  });
});

describe('histories and last-seen timestamps', () => {
  it('show a latecomer what was said in the room and in its groups, each with the time it was handled', async () => {
    const { alice, dev, starters, id } = await fourInARoom();
    dev.command('chat', 'send_message', { scope: 'global', content: 'Hello all!' });
    const global = (await dev.next('chat', 'message_sent')).payload;
    expect((await alice.next('chat', 'message_sent')).payload).toEqual(global);
    alice.command('chat', 'send_message', { scope: 'group', target: '/ops', content: 'Hello ops!' });
    const ops = (await alice.next('chat', 'message_sent')).payload;
    const late = await join(starters.moderator, 'Alice on her phone');
    const { message: _, ...stored } = global;
    expect(late.joinSuccess.chat).toMatchObject({
      room_history: [{ ...stored, source: id(dev), timestamp: expect.any(String) }],
      groups_history: [
        { name: '/dev', history: [] },
        { name: '/ops', history: [expect.objectContaining({ id: ops.id, content: 'Hello ops!', target: '/ops' })] },
      ],
    });
    const handled = Date.parse(late.joinSuccess.chat!.room_history[0]!.timestamp);
    expect(Math.abs(handled - Date.now())).toBeLessThan(10_000);
  });

  it('show a latecomer nothing of a group it is not in, nor of the private chats of others', async () => {
    const { alice, dev, nadia, gina, starters, id } = await fourInARoom();
    dev.command('chat', 'send_message', { scope: 'group', target: '/dev', content: 'Hello dev!' });
    alice.command('chat', 'send_message', { scope: 'group', target: '/ops', content: 'Hello ops!' });
    gina.command('chat', 'send_message', { scope: 'private', target: id(nadia), content: 'Hello Nadia!' });
    dev.command('chat', 'send_message', { scope: 'private', target: id(alice), content: 'Hello Alice!' });
    // Alice hears the two groups' and Dev's private message, Nadia Gina's
    for (let i = 0; i < 3; i++) await alice.next('chat', 'message_sent');
    await nadia.next('chat', 'message_sent');
    const [devAgain, nadiaAgain, guest] = [
      await join(starters.developer, 'Dev again'),
      await join(starters.nobody, 'Nadia again'),
      await join(starters.guest, 'Gina again'),
    ];
    expect(devAgain.joinSuccess.chat).toEqual({
      ...emptyChat,
      groups_history: [{ name: '/dev', history: [expect.objectContaining({ content: 'Hello dev!' })] }],
    });
    for (const late of [nadiaAgain, guest]) expect(late.joinSuccess.chat).toEqual(emptyChat);
  });

  it(`show a latecomer the last ${HISTORY_LIMIT} messages of a scope, oldest first`, async () => {
    const { dev, nadia, starters } = await fourInARoom();
    for (let i = 1; i <= HISTORY_LIMIT + 1; i++) dev.command('chat', 'send_message', { scope: 'group', target: '/dev', content: `#${i}` });
    for (let i = 1; i <= HISTORY_LIMIT + 1; i++) await dev.next('chat', 'message_sent');
    const late = await join(starters.developer, 'Dev again');
    const [group] = late.joinSuccess.chat!.groups_history;
    expect(group!.history.map((message) => message.content)).toEqual(Array.from({ length: HISTORY_LIMIT }, (_, i) => `#${i + 2}`));
    await quiet([nadia]);
  });

  it('keep a participant’s private messages and last-seen timestamps for its resumed session, and answer nothing to set_last_seen_timestamp', async () => {
    const { alice, dev, gina, id, starters } = await fourInARoom();
    gina.command('chat', 'send_message', { scope: 'private', target: id(dev), content: 'Hello Dev!' });
    await dev.next('chat', 'message_sent');
    // what the web app sends right after joining, and more
    dev.command('chat', 'set_last_seen_timestamp', { scope: 'global', timestamp: '2026-05-04T09:30:00Z' });
    dev.command('chat', 'set_last_seen_timestamp', { scope: 'group', target: '/dev', timestamp: '2026-05-04T09:31:00Z' });
    dev.command('chat', 'set_last_seen_timestamp', { scope: 'private', target: id(gina), timestamp: '2026-05-04T09:32:00Z' });
    await dev.expectNothing(undefined, undefined, GRACE_MS);

    await dev.close();
    await alice.next('control', 'left');
    const back = await openResuming(starters.developer, dev.resumption);
    back.command('control', 'join', { display_name: 'Dev' });
    const { chat } = (await back.next('control', 'join_success')).payload;
    expect(chat).toMatchObject({
      private_history: [{ correspondent: id(gina), history: [expect.objectContaining({ source: id(gina), target: id(dev), content: 'Hello Dev!' })] }],
      last_seen_timestamp_global: '2026-05-04T09:30:00Z',
      last_seen_timestamps_group: { '/dev': '2026-05-04T09:31:00Z' },
      last_seen_timestamps_private: { [id(gina)]: '2026-05-04T09:32:00Z' },
    });
  });

  it('refuse a last-seen timestamp for a group not its own or a stranger, and a malformed or overlong timestamp', async () => {
    const { dev } = await fourInARoom();
    dev.command('chat', 'set_last_seen_timestamp', { scope: 'group', target: '/ops', timestamp: '2026-05-04T09:30:00Z' });
    expect(await nextError(dev)).toBe('invalid_target');
    dev.command('chat', 'set_last_seen_timestamp', { scope: 'private', target: '00000000-0000-4000-8000-000000000000', timestamp: '2026-05-04T09:30:00Z' });
    expect(await nextError(dev)).toBe('invalid_target');
    const longest = `2026-05-04T09:30:00.${'1'.repeat(43)}Z`; // 64 characters
    expect(longest).toHaveLength(64);
    dev.command('chat', 'set_last_seen_timestamp', { scope: 'global', timestamp: longest });
    await dev.expectNothing(undefined, undefined, GRACE_MS);
    for (const timestamp of [`2026-05-04T09:30:00.${'1'.repeat(44)}Z`, 'yesterday']) {
      dev.command('chat', 'set_last_seen_timestamp', { scope: 'global', timestamp });
      expect((await dev.next('control', 'error')).payload).toMatchObject({ error: 'invalid_message', details: { action: 'set_last_seen_timestamp' } });
    }
  });

  it('are forgotten once everyone has left: the next meeting in the room starts afresh', async () => {
    const { alice, dev, everyone, starters } = await fourInARoom();
    dev.command('chat', 'send_message', { scope: 'global', content: 'Hello all!' });
    await dev.next('chat', 'message_sent');
    alice.command('chat', 'disable_chat');
    await alice.next('chat', 'chat_disabled');
    await Promise.all(everyone.map((client) => client.close()));
    if (redisUrl) expect(await roomKeysLeft(starters.moderator.roomId)).toEqual([]);
    // without Redis the departures finish in the same process; a new start waits for none of them
    await new Promise((resolve) => setTimeout(resolve, GRACE_MS));
    const next = await join(starters.developer, 'Dev');
    expect(next.joinSuccess.chat).toEqual({ ...emptyChat, groups_history: [{ name: '/dev', history: [] }] });
  });
});

describe('a tariff without chat', () => {
  it('has no chat key in join_success and answers chat commands with invalid_namespace', async () => {
    const { moderator } = await room({ tariff: 'no_chat' });
    const alice = await join(moderator, 'Alice');
    expect(alice.joinSuccess).not.toHaveProperty('chat');
    expect(alice.joinSuccess.tariff.enabled_modules).not.toContain('chat');
    alice.command('chat', 'send_message', { scope: 'global', content: 'Hello?' });
    expect((await alice.next('control', 'error')).payload).toEqual({ message: 'error', error: 'invalid_namespace', details: { namespace: 'chat' } });
  });
});
