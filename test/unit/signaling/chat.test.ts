/**
 * The chat module through the module tester: the control and chat modules over the in-process bus and fake
 * participants of every role, with groups as their users' `x_grp` claims would give them. Every
 * command and event of the `chat` namespace: who hears a global, a group and a private message, the
 * content limits at their edges, the histories and last-seen timestamps `join_success` shows, the
 * moderators' switch and clearing (and everyone else refused), the room's chat forgotten once it is
 * empty, two instances over one store, and a tariff without chat. Every event a participant gets is
 * checked against the contract by the tester.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChatStore } from '../../../src/signaling/modules/chat/chat-store.js';
import { createLocalChatStore } from '../../../src/signaling/modules/chat/chat-store.local.js';
import { createChatModule, MAX_CHARACTERS } from '../../../src/signaling/modules/chat/chat.module.js';
import { createControlModule } from '../../../src/signaling/modules/control/control.module.js';
import type { CommandPayload, ModuleDeps, SignalingModule } from '../../../src/signaling/modules/module.js';
import { createModuleTester, type FakeSession, type ModuleTester, type ParticipantOptions } from '../../support/module-tester.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let tester: ModuleTester;
let alice: FakeSession; // moderator, groups /dev and /ops
let bob: FakeSession; // registered user, group /dev
let carol: FakeSession; // registered user, no group
let guest: FakeSession;

/** A participant whose user is in `groups` (as the room context reads them for registered users). */
function member(groups: string[], options: ParticipantOptions = {}, on: ModuleTester = tester): FakeSession {
  const session = on.participant(options);
  session.participant.groups = groups;
  return session;
}

/** The control module (the join flow) and the chat; the other modules play no part here. */
const controlAndChat = (deps: ModuleDeps): SignalingModule[] => [createControlModule(deps), createChatModule(deps)];

beforeEach(async () => {
  tester = createModuleTester({ modules: controlAndChat });
  alice = member(['/dev', '/ops'], { role: 'moderator', isRoomOwner: true, displayName: 'Alice' });
  bob = member(['/dev'], { displayName: 'Bob' });
  carol = member([], { displayName: 'Carol' });
  guest = tester.participant({ kind: 'guest', displayName: 'Gina' });
  for (const session of everyone()) await tester.join(session);
  for (const session of everyone()) tester.sent(session);
});

afterEach(async () => {
  await tester.close();
});

const everyone = () => [alice, bob, carol, guest];
const chat = (session: FakeSession, fields: CommandPayload) => tester.command(session, 'chat', fields);
const send = (session: FakeSession, scope: 'global' | 'group' | 'private', content: string, target?: string) =>
  chat(session, { action: 'send_message', scope, content, ...(target !== undefined ? { target } : {}) });
/** The chat events each of the sessions got since the last look. */
const chatEvents = (sessions: FakeSession[] = everyone()) => sessions.map((session) => tester.payloads(session, 'chat'));
const error = (code: string) => ({ message: 'error', error: code });

/** Joins a new participant and answers its `join_success` `chat`. */
async function chatAtJoin(session: FakeSession): Promise<Record<string, unknown> | undefined> {
  await tester.join(session);
  const [joined] = tester.payloads(session, 'control').filter((payload) => payload.message === 'join_success');
  return joined!.chat as Record<string, unknown> | undefined;
}

describe('send_message', () => {
  it('sends a global message to everyone, the sender included', async () => {
    await send(bob, 'global', 'Hello all!');
    const [mine, ...others] = chatEvents();
    expect(mine).toEqual([{ message: 'message_sent', id: expect.stringMatching(UUID), source: bob.id, content: 'Hello all!', scope: 'global' }]);
    for (const got of others) expect(got).toEqual(mine);
  });

  it('leaves out a target given with a global message', async () => {
    await send(bob, 'global', 'Hello all!', '/dev');
    const [[sent]] = chatEvents([carol]) as [Record<string, unknown>[]];
    expect(sent).not.toHaveProperty('target');
  });

  it("sends a group message to the group's members, the sender included, and nobody else", async () => {
    await send(bob, 'group', 'Hello dev!', '/dev');
    const sent = { message: 'message_sent', id: expect.stringMatching(UUID), source: bob.id, content: 'Hello dev!', scope: 'group', target: '/dev' };
    expect(chatEvents()).toEqual([[sent], [sent], [], []]);
    await send(alice, 'group', 'Hello ops!', '/ops');
    expect(chatEvents()).toEqual([[{ ...sent, source: alice.id, content: 'Hello ops!', target: '/ops' }], [], [], []]);
  });

  it('refuses a group the sender is not in with invalid_target, guests included', async () => {
    await send(bob, 'group', 'Hello ops!', '/ops');
    await send(carol, 'group', 'Hello dev!', '/dev');
    await send(guest, 'group', 'Hello dev!', '/dev');
    expect(chatEvents()).toEqual([[], [error('invalid_target')], [error('invalid_target')], [error('invalid_target')]]);
  });

  it('sends a private message to the sender and the target alone, whatever their role or kind', async () => {
    await send(guest, 'private', 'Hello Carol!', carol.id);
    const sent = { message: 'message_sent', id: expect.stringMatching(UUID), source: guest.id, content: 'Hello Carol!', scope: 'private', target: carol.id };
    expect(chatEvents()).toEqual([[], [], [sent], [sent]]);
  });

  it('refuses a private message to the sender itself, to nobody in the room, and to one who left', async () => {
    await send(bob, 'private', 'Note to self', bob.id);
    await send(bob, 'private', 'Anyone?', randomUUID());
    await tester.leave(carol);
    await send(bob, 'private', 'Still there?', carol.id);
    expect(chatEvents([bob])).toEqual([[error('invalid_target'), error('invalid_target'), error('invalid_target')]]);
    expect(chatEvents([alice, guest])).toEqual([[], []]);
  });

  it('refuses empty content and content of white space only with empty_message', async () => {
    await send(bob, 'global', '');
    await send(bob, 'global', ' \n\t\u00a0\u3000');
    expect(chatEvents()).toEqual([[], [error('empty_message'), error('empty_message')], [], []]);
  });

  it(`takes ${MAX_CHARACTERS} characters counted as code points, and refuses one more with max_characters_exceeded`, async () => {
    const longest = '😀'.repeat(MAX_CHARACTERS); // twice as many UTF-16 units
    await send(bob, 'global', longest);
    expect(chatEvents([bob, carol]).map((events) => events.map((event) => event.content))).toEqual([[longest], [longest]]);
    await send(bob, 'global', `${longest}a`);
    await send(bob, 'global', 'a'.repeat(MAX_CHARACTERS + 1));
    expect(chatEvents([bob, carol])).toEqual([[error('max_characters_exceeded'), error('max_characters_exceeded')], []]);
  });

  it('sends the content as it came, white space and all', async () => {
    await send(bob, 'global', '  two\nlines  ');
    expect(chatEvents([carol])).toEqual([[expect.objectContaining({ content: '  two\nlines  ' })]]);
  });

  it('gives every message its own id', async () => {
    await send(bob, 'global', 'one');
    await send(bob, 'global', 'two');
    const [[first, second]] = chatEvents([carol]) as [Record<string, unknown>[]];
    expect(first!.id).not.toBe(second!.id);
  });
});

describe('enable_chat and disable_chat', () => {
  it('lets moderators switch the chat off and on, telling everyone who did', async () => {
    await chat(alice, { action: 'disable_chat' });
    expect(chatEvents()).toEqual(everyone().map(() => [{ message: 'chat_disabled', issued_by: alice.id }]));
    await chat(alice, { action: 'enable_chat' });
    expect(chatEvents()).toEqual(everyone().map(() => [{ message: 'chat_enabled', issued_by: alice.id }]));
  });

  it.each(['disable_chat', 'enable_chat'])('refuses %s from a user and a guest with insufficient_permissions, to the sender only', async (action) => {
    await chat(bob, { action });
    await chat(guest, { action });
    expect(chatEvents()).toEqual([[], [error('insufficient_permissions')], [], [error('insufficient_permissions')]]);
  });

  it('refuses every message while the chat is off, a moderator’s too, and takes them again once it is on', async () => {
    await chat(alice, { action: 'disable_chat' });
    chatEvents();
    await send(bob, 'global', 'Hello?');
    await send(bob, 'group', 'Hello dev?', '/dev');
    await send(bob, 'private', 'Hello Carol?', carol.id);
    await send(alice, 'global', 'Moderator here');
    expect(chatEvents()).toEqual([[error('chat_disabled')], [error('chat_disabled'), error('chat_disabled'), error('chat_disabled')], [], []]);
    await chat(alice, { action: 'enable_chat' });
    chatEvents();
    await send(bob, 'global', 'Hello again');
    expect(chatEvents([carol])).toEqual([[expect.objectContaining({ message: 'message_sent', content: 'Hello again' })]]);
  });

  it('shows a joiner whether the chat is on', async () => {
    await chat(alice, { action: 'disable_chat' });
    expect(await chatAtJoin(member([]))).toMatchObject({ enabled: false });
    await chat(alice, { action: 'enable_chat' });
    expect(await chatAtJoin(member([]))).toMatchObject({ enabled: true });
  });

  it('follows the role the session has now: a moderator made a user may no longer switch', async () => {
    alice.role = 'user';
    await chat(alice, { action: 'disable_chat' });
    expect(chatEvents([alice])).toEqual([[error('insufficient_permissions')]]);
  });
});

describe('clear_history', () => {
  it("empties the room's history for later joiners, tells everyone, and keeps group and private histories", async () => {
    await send(bob, 'global', 'Hello all!');
    await send(bob, 'group', 'Hello dev!', '/dev');
    await send(bob, 'private', 'Hello Alice!', alice.id);
    chatEvents();
    await chat(alice, { action: 'clear_history' });
    expect(chatEvents()).toEqual(everyone().map(() => [{ message: 'history_cleared', issued_by: alice.id }]));
    const later = await chatAtJoin(member(['/dev'], { resumes: alice }));
    expect(later).toMatchObject({
      room_history: [],
      groups_history: [{ name: '/dev', history: [expect.objectContaining({ content: 'Hello dev!' })] }],
      private_history: [{ correspondent: bob.id, history: [expect.objectContaining({ content: 'Hello Alice!' })] }],
    });
  });

  it('refuses a user and a guest with insufficient_permissions and clears nothing', async () => {
    await send(bob, 'global', 'Hello all!');
    chatEvents();
    await chat(bob, { action: 'clear_history' });
    await chat(guest, { action: 'clear_history' });
    expect(chatEvents()).toEqual([[], [error('insufficient_permissions')], [], [error('insufficient_permissions')]]);
    expect(await chatAtJoin(member([]))).toMatchObject({ room_history: [expect.objectContaining({ content: 'Hello all!' })] });
  });
});

describe('join_success', () => {
  it('shows a joiner an empty chat with one entry per group of its user, and a guest none', async () => {
    const empty = {
      enabled: true,
      room_history: [],
      groups_history: [],
      private_history: [],
      last_seen_timestamp_global: null,
      last_seen_timestamps_group: {},
      last_seen_timestamps_private: {},
    };
    expect(await chatAtJoin(member(['/dev', '/qa']))).toEqual({
      ...empty,
      groups_history: [
        { name: '/dev', history: [] },
        { name: '/qa', history: [] },
      ],
    });
    expect(await chatAtJoin(tester.participant({ kind: 'guest' }))).toEqual(empty);
  });

  it('shows what was said: the room’s, its groups’, and its own private messages, with the time each was handled', async () => {
    /** What `from` was sent of its own message. */
    const said = async (from: FakeSession, ...args: Parameters<typeof send> extends [unknown, ...infer R] ? R : never) => {
      await send(from, ...args);
      return tester.payloads(from, 'chat')[0]!;
    };
    const global = await said(bob, 'global', 'Hello all!');
    await tester.advance(1_000);
    const dev = await said(bob, 'group', 'Hello dev!', '/dev');
    await said(alice, 'group', 'Hello ops!', '/ops');
    const toCarol = await said(bob, 'private', 'Hello Carol!', carol.id);
    const stored = ({ message: _, ...fields }: Record<string, unknown>, at: string) => ({ ...fields, timestamp: at });
    const t0 = new Date(tester.scheduler.now() - 1_000).toISOString();
    const t1 = new Date(tester.scheduler.now()).toISOString();

    // bob again, resumed: his groups, his private chat
    expect(await chatAtJoin(member(['/dev'], { resumes: bob }))).toMatchObject({
      room_history: [stored(global, t0)],
      groups_history: [{ name: '/dev', history: [stored(dev, t1)] }],
      private_history: [{ correspondent: carol.id, history: [stored(toCarol, t1)] }],
    });
    // someone new in no group: the room's history only
    expect(await chatAtJoin(member([]))).toMatchObject({ room_history: [stored(global, t0)], groups_history: [], private_history: [] });
  });

  it('shows at most the last 100 messages of the room', async () => {
    for (let i = 1; i <= 101; i++) await send(bob, 'global', `message ${i}`);
    const { room_history } = (await chatAtJoin(member([]))) as { room_history: { content: string }[] };
    expect(room_history.map((m) => m.content)).toEqual(Array.from({ length: 100 }, (_, i) => `message ${i + 2}`));
  });

  it('does not send a joiner a message again that its history showed, and sends it later ones', async () => {
    await send(bob, 'global', 'Hello all!');
    const [[shown]] = chatEvents([bob]) as [Record<string, unknown>[]];
    const dave = member([]);
    await chatAtJoin(dave);
    const module = tester.module('chat');
    const message = { namespace: 'chat', payload: shown as { message: string }, audience: { to: 'room' } as const };
    // the event of the message its history showed, still on its way through Redis: dropped once
    expect(module.withholds!(dave, message)).toBe(true);
    expect(module.withholds!(dave, message)).toBe(false);
    await send(bob, 'global', 'Welcome Dave');
    expect(chatEvents([dave])).toEqual([[expect.objectContaining({ content: 'Welcome Dave' })]]);
  });

  it('expects no event of a message handled long before the join', async () => {
    await send(bob, 'global', 'Hello all!');
    const [[shown]] = chatEvents([bob]) as [Record<string, unknown>[]];
    await tester.advance(5_001);
    const dave = member([]);
    await chatAtJoin(dave);
    expect(tester.module('chat').withholds!(dave, { namespace: 'chat', payload: shown as { message: string }, audience: { to: 'room' } })).toBe(false);
  });

  it('forgets the room’s chat once the room is empty: the next session starts afresh, with the chat on', async () => {
    await send(bob, 'global', 'Hello all!');
    await send(bob, 'private', 'Hello Alice!', alice.id);
    await chat(alice, { action: 'disable_chat' });
    for (const session of everyone()) await tester.leave(session);
    expect(await chatAtJoin(member(['/dev'], { resumes: bob }))).toEqual({
      enabled: true,
      room_history: [],
      groups_history: [{ name: '/dev', history: [] }],
      private_history: [],
      last_seen_timestamp_global: null,
      last_seen_timestamps_group: {},
      last_seen_timestamps_private: {},
    });
  });

  it('keeps the chat while anyone is still in the room', async () => {
    await send(bob, 'global', 'Hello all!');
    for (const session of [alice, bob, carol]) await tester.leave(session);
    expect(await chatAtJoin(member([]))).toMatchObject({ room_history: [expect.objectContaining({ content: 'Hello all!' })] });
  });
});

describe('set_last_seen_timestamp', () => {
  const at = (minute: number) => `2026-05-04T09:${minute}:00.000Z`;

  it('keeps each scope’s latest timestamp, sends nothing back, and shows them to the same participant when it comes back', async () => {
    await send(carol, 'private', 'Hello Bob!', bob.id);
    chatEvents();
    await chat(bob, { action: 'set_last_seen_timestamp', scope: 'global', timestamp: at(30) });
    await chat(bob, { action: 'set_last_seen_timestamp', scope: 'global', timestamp: at(31) });
    await chat(bob, { action: 'set_last_seen_timestamp', scope: 'group', target: '/dev', timestamp: at(32) });
    await chat(bob, { action: 'set_last_seen_timestamp', scope: 'private', target: carol.id, timestamp: at(33) });
    expect(chatEvents()).toEqual(everyone().map(() => []));
    await tester.leave(bob);
    expect(await chatAtJoin(member(['/dev'], { resumes: bob }))).toMatchObject({
      last_seen_timestamp_global: at(31),
      last_seen_timestamps_group: { '/dev': at(32) },
      last_seen_timestamps_private: { [carol.id]: at(33) },
    });
    // another participant (a new session, a new id) starts with none
    expect(await chatAtJoin(member(['/dev']))).toMatchObject({
      last_seen_timestamp_global: null,
      last_seen_timestamps_group: {},
      last_seen_timestamps_private: {},
    });
  });

  it('takes a private one for a participant in the room, or one that left after a private chat', async () => {
    await chat(bob, { action: 'set_last_seen_timestamp', scope: 'private', target: guest.id, timestamp: at(30) });
    await send(carol, 'private', 'Bye Bob', bob.id);
    await tester.leave(carol);
    await chat(bob, { action: 'set_last_seen_timestamp', scope: 'private', target: carol.id, timestamp: at(31) });
    expect(chatEvents([bob])).toEqual([[expect.objectContaining({ message: 'message_sent' })]]);
  });

  it('refuses a group the sender is not in, itself, and a stranger with invalid_target, storing nothing', async () => {
    await chat(bob, { action: 'set_last_seen_timestamp', scope: 'group', target: '/ops', timestamp: at(30) });
    await chat(guest, { action: 'set_last_seen_timestamp', scope: 'group', target: '/dev', timestamp: at(30) });
    await chat(bob, { action: 'set_last_seen_timestamp', scope: 'private', target: bob.id, timestamp: at(30) });
    await chat(bob, { action: 'set_last_seen_timestamp', scope: 'private', target: randomUUID(), timestamp: at(30) });
    expect(chatEvents([bob, guest])).toEqual([[error('invalid_target'), error('invalid_target'), error('invalid_target')], [error('invalid_target')]]);
    expect(await chatAtJoin(member(['/dev', '/ops'], { resumes: bob }))).toMatchObject({ last_seen_timestamps_group: {}, last_seen_timestamps_private: {} });
  });
});

/**
 * Without the control module, whose membership the tester's instances would not share (Redis does,
 * see the integration tests), so no private messages here: their target must be in the room.
 */
describe('two instances over one store', () => {
  const chatOnly = (deps: ModuleDeps): SignalingModule[] => [createChatModule(deps)];
  let store: ChatStore;
  let second: ModuleTester;

  beforeEach(async () => {
    await tester.close();
    store = createLocalChatStore();
    tester = createModuleTester({ modules: chatOnly, stores: { chat: store } });
    second = tester.sibling({ modules: chatOnly, stores: { chat: store } });
    alice = member(['/dev', '/ops'], { role: 'moderator' });
    bob = member(['/dev'], { room: alice.room }, second);
    carol = member(['/ops'], { room: alice.room }, second);
    guest = second.participant({ room: alice.room, kind: 'guest' });
    await tester.join(alice);
    for (const session of [bob, carol, guest]) await second.join(session);
  });

  afterEach(async () => {
    await second.close();
  });

  const on = (session: FakeSession) => (session === alice ? tester : second);
  const events = (sessions: FakeSession[]) => sessions.map((session) => on(session).payloads(session, 'chat'));

  it('delivers each scope to its audience on both instances', async () => {
    await second.command(bob, 'chat', { action: 'send_message', scope: 'global', content: 'Hello all!' });
    expect(events(everyone()).map((got) => got.map((event) => event.content))).toEqual(everyone().map(() => ['Hello all!']));
    await second.command(bob, 'chat', { action: 'send_message', scope: 'group', target: '/dev', content: 'Hello dev!' });
    expect(events(everyone()).map((got) => got.length)).toEqual([1, 1, 0, 0]);
    await second.command(carol, 'chat', { action: 'send_message', scope: 'group', target: '/ops', content: 'Hello ops!' });
    expect(events(everyone()).map((got) => got.length)).toEqual([1, 0, 1, 0]);
  });

  it("holds one moderator's switch on the other instance", async () => {
    await tester.command(alice, 'chat', { action: 'disable_chat' });
    expect(events(everyone())).toEqual(everyone().map(() => [{ message: 'chat_disabled', issued_by: alice.id }]));
    await second.command(bob, 'chat', { action: 'send_message', scope: 'global', content: 'Hello?' });
    expect(events(everyone())).toEqual([[], [error('chat_disabled')], [], []]);
  });

  it('shows a joiner on one instance what was said on the other', async () => {
    await second.command(bob, 'chat', { action: 'send_message', scope: 'global', content: 'Hello all!' });
    const dave = member([], { room: alice.room });
    await tester.join(dave);
    const data = await tester.module('chat').joinData!(dave, tester.hubs.get(alice.room.roomId)!);
    expect(data).toMatchObject({ room_history: [expect.objectContaining({ source: bob.id, content: 'Hello all!' })] });
  });
});

describe('a tariff without chat', () => {
  it('puts no chat key into join_success', async () => {
    const base = tester.room();
    const room = { ...base, tariff: { ...base.tariff, enabled_modules: base.tariff.enabled_modules.filter((id) => id !== 'chat') } };
    const dave = member(['/dev'], { room });
    expect(await chatAtJoin(dave)).toBeUndefined();
    await expect(chat(dave, { action: 'send_message', scope: 'global', content: 'Hello?' })).rejects.toThrow(/has no chat module/);
  });
});
