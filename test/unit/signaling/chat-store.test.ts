/**
 * The chat store's contract, run against the in-process store and, when REDIS_URL is set, against
 * two Redis stores on separate connections (two instances sharing one room): each scope's history
 * (capped at its last 100 messages) as a joiner of any instance sees it, the switch checked in the
 * same step as the append, who exchanged private messages, last-seen timestamps per participant,
 * and a room forgotten whole; and, in Redis, no key for a room where nothing was said, every key
 * under the room's prefix with a time to live, and none left once the room is forgotten.
 */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { HISTORY_LIMIT, type ChatStore, type StoredMessage } from '../../../src/signaling/modules/chat/chat-store.js';
import { createLocalChatStore } from '../../../src/signaling/modules/chat/chat-store.local.js';
import { CHAT_KEY_TTL_MS, createRedisChatStore } from '../../../src/signaling/modules/chat/chat-store.redis.js';
import { describeRoomStore, T0 } from '../../support/room-stores.js';

let clock = T0;
/** A message from `source`, handled a second after the previous one. */
function message(source: string, fields: Partial<StoredMessage> = {}): StoredMessage {
  clock += 1_000;
  return { id: randomUUID(), source, content: `message ${clock}`, scope: 'global', timestamp: new Date(clock).toISOString(), ...fields };
}
const toGroup = (source: string, group: string) => message(source, { scope: 'group', target: group });
const toParticipant = (source: string, target: string) => message(source, { scope: 'private', target });

const empty = (groups: string[] = []) => ({
  enabled: true,
  room: [],
  groups: groups.map((name) => ({ name, history: [] })),
  private: [],
  lastSeen: { groups: {}, private: {} },
});

describeRoomStore<ChatStore>(
  'chat store',
  { local: createLocalChatStore, redis: createRedisChatStore },
  (stores) => {
    const room = () => randomUUID();
    const [alice, bob, carol] = [randomUUID(), randomUUID(), randomUUID()];

    it('shows a new room an enabled chat with nothing said, and an entry for each group asked for', async () => {
      const [store] = stores();
      expect(await store.join(room(), alice, ['/dev', '/ops'])).toEqual(empty(['/dev', '/ops']));
    });

    it("keeps the room's history in order for joiners on every instance", async () => {
      const [one, two] = stores();
      const roomId = room();
      const sent = [message(alice), message(alice)];
      for (const m of sent) expect(await one.post(roomId, m)).toBe('posted');
      expect((await two.join(roomId, bob, [])).room).toEqual(sent);
    });

    it(`keeps the last ${HISTORY_LIMIT} messages of each scope`, async () => {
      const [one, two] = stores();
      const roomId = room();
      const global = Array.from({ length: HISTORY_LIMIT + 1 }, () => message(alice));
      const group = Array.from({ length: HISTORY_LIMIT + 1 }, () => toGroup(alice, '/dev'));
      const pair = Array.from({ length: HISTORY_LIMIT + 1 }, () => toParticipant(alice, bob));
      for (const m of [...global, ...group, ...pair]) await one.post(roomId, m);
      const state = await two.join(roomId, alice, ['/dev']);
      expect(state.room).toEqual(global.slice(1));
      expect(state.groups).toEqual([{ name: '/dev', history: group.slice(1) }]);
      expect(state.private).toEqual([{ correspondent: bob, history: pair.slice(1) }]);
    });

    it("shows a group's history to those who ask for the group, each group on its own", async () => {
      const [one, two] = stores();
      const roomId = room();
      const dev = toGroup(alice, '/dev');
      const ops = toGroup(alice, '/ops');
      await one.post(roomId, dev);
      await one.post(roomId, ops);
      expect((await two.join(roomId, bob, ['/dev'])).groups).toEqual([{ name: '/dev', history: [dev] }]);
      expect((await two.join(roomId, carol, [])).groups).toEqual([]);
      expect((await one.join(roomId, alice, ['/ops', '/dev'])).groups).toEqual([
        { name: '/ops', history: [ops] },
        { name: '/dev', history: [dev] },
      ]);
    });

    it('shows a private chat to both of its participants alone, and knows them as correspondents', async () => {
      const [one, two] = stores();
      const roomId = room();
      const hello = toParticipant(alice, bob);
      const reply = toParticipant(bob, alice);
      expect(await one.post(roomId, hello)).toBe('posted');
      expect(await two.post(roomId, reply)).toBe('posted');
      expect((await two.join(roomId, alice, [])).private).toEqual([{ correspondent: bob, history: [hello, reply] }]);
      expect((await one.join(roomId, bob, [])).private).toEqual([{ correspondent: alice, history: [hello, reply] }]);
      expect((await one.join(roomId, carol, [])).private).toEqual([]);
      expect([await two.isCorrespondent(roomId, alice, bob), await two.isCorrespondent(roomId, bob, alice)]).toEqual([true, true]);
      expect([await one.isCorrespondent(roomId, alice, carol), await one.isCorrespondent(room(), alice, bob)]).toEqual([false, false]);
    });

    it('lists each correspondent once, with the pair’s one history', async () => {
      const [one, two] = stores();
      const roomId = room();
      const toBob = toParticipant(alice, bob);
      const toCarol = toParticipant(alice, carol);
      const again = toParticipant(alice, bob);
      for (const m of [toBob, toCarol, again]) await one.post(roomId, m);
      const byCorrespondent = (await two.join(roomId, alice, [])).private.sort((a, b) => a.correspondent.localeCompare(b.correspondent));
      expect(byCorrespondent).toEqual(
        [
          { correspondent: bob, history: [toBob, again] },
          { correspondent: carol, history: [toCarol] },
        ].sort((a, b) => a.correspondent.localeCompare(b.correspondent)),
      );
    });

    it('refuses every message while the chat is off, on every instance, and takes them again once it is on', async () => {
      const [one, two] = stores();
      const roomId = room();
      await one.setEnabled(roomId, false);
      expect((await two.join(roomId, carol, [])).enabled).toBe(false);
      for (const m of [message(alice), toGroup(alice, '/dev'), toParticipant(alice, bob)]) expect(await two.post(roomId, m)).toBe('chat_disabled');
      expect(await one.join(roomId, alice, ['/dev'])).toEqual({ ...empty(['/dev']), enabled: false });
      expect(await one.isCorrespondent(roomId, alice, bob)).toBe(false);
      await two.setEnabled(roomId, true);
      const after = message(alice);
      expect(await one.post(roomId, after)).toBe('posted');
      expect(await one.join(roomId, carol, ['/dev'])).toMatchObject({ enabled: true, room: [after], groups: [{ name: '/dev', history: [] }], private: [] });
    });

    it("clears the room's history and leaves the group and private histories", async () => {
      const [one, two] = stores();
      const roomId = room();
      const group = toGroup(alice, '/dev');
      const pair = toParticipant(alice, bob);
      for (const m of [message(alice), group, pair]) await one.post(roomId, m);
      await two.clearRoomHistory(roomId);
      expect(await one.join(roomId, alice, ['/dev'])).toMatchObject({
        room: [],
        groups: [{ name: '/dev', history: [group] }],
        private: [{ correspondent: bob, history: [pair] }],
      });
      const next = message(bob);
      await two.post(roomId, next);
      expect((await one.join(roomId, carol, [])).room).toEqual([next]);
    });

    it('keeps last-seen timestamps per participant, the latest of each scope, for joiners on every instance', async () => {
      const [one, two] = stores();
      const roomId = room();
      await one.setLastSeen(roomId, alice, { scope: 'global' }, '2026-05-04T09:30:00Z');
      await one.setLastSeen(roomId, alice, { scope: 'global' }, '2026-05-04T09:31:00Z');
      await one.setLastSeen(roomId, alice, { scope: 'group', target: '/dev' }, '2026-05-04T09:32:00Z');
      await one.setLastSeen(roomId, alice, { scope: 'private', target: bob }, '2026-05-04T09:33:00Z');
      expect((await two.join(roomId, alice, ['/dev'])).lastSeen).toEqual({
        global: '2026-05-04T09:31:00Z',
        groups: { '/dev': '2026-05-04T09:32:00Z' },
        private: { [bob]: '2026-05-04T09:33:00Z' },
      });
      expect((await two.join(roomId, bob, [])).lastSeen).toEqual({ groups: {}, private: {} });
    });

    it('keeps a group named like a property of every object as just another group', async () => {
      const [one, two] = stores();
      const roomId = room();
      const odd = toGroup(alice, '__proto__');
      await one.post(roomId, odd);
      await one.setLastSeen(roomId, alice, { scope: 'group', target: '__proto__' }, '2026-05-04T09:35:00Z');
      const state = await two.join(roomId, alice, ['__proto__']);
      expect(state.groups).toEqual([{ name: '__proto__', history: [odd] }]);
      expect(Object.entries(state.lastSeen.groups)).toEqual([['__proto__', '2026-05-04T09:35:00Z']]);
    });

    it('forgets everything of the room at once: the next session starts with the chat on and nothing said', async () => {
      const [one, two] = stores();
      const roomId = room();
      await one.setLastSeen(roomId, alice, { scope: 'global' }, '2026-05-04T09:30:00Z');
      for (const m of [message(alice), toGroup(alice, '/dev'), toParticipant(alice, bob)]) await one.post(roomId, m);
      await one.setEnabled(roomId, false);
      await two.forget(roomId);
      expect(await one.join(roomId, alice, ['/dev'])).toEqual(empty(['/dev']));
      expect(await one.isCorrespondent(roomId, alice, bob)).toBe(false);
      await two.forget(roomId); // nothing left to forget
    });

    it('keeps rooms apart', async () => {
      const [one, two] = stores();
      const [first, second] = [room(), room()];
      await one.setEnabled(first, false);
      const hello = message(alice);
      expect(await two.post(second, hello)).toBe('posted');
      expect(await two.join(first, bob, [])).toEqual({ ...empty(), enabled: false });
      expect((await two.join(second, bob, [])).room).toEqual([hello]);
    });
  },
  (store, look) => {
    const keysOf = async (roomId: string) => (await look().keys(`convene:signaling:room:${roomId}:*`)).sort();

    it(`writes nothing for a room where nothing was said; keeps every key under the room's prefix, each expiring within ${CHAT_KEY_TTL_MS / 86_400_000} days, and none once forgotten`, async () => {
      const chat = store();
      const roomId = randomUUID();
      const [alice, bob] = [randomUUID(), randomUUID()];
      await chat.join(roomId, alice, ['/dev']);
      expect(await keysOf(roomId)).toEqual([]);
      for (const m of [message(alice), toGroup(alice, '/dev'), toParticipant(alice, bob)]) await chat.post(roomId, m);
      await chat.setLastSeen(roomId, alice, { scope: 'global' }, '2026-05-04T09:30:00Z');
      await chat.setEnabled(roomId, false);
      const prefix = `convene:signaling:room:${roomId}:chat:`;
      const keys = await keysOf(roomId);
      expect(keys.map((key) => key.slice(prefix.length))).toEqual(
        [
          'keys',
          'disabled',
          'history:global',
          'history:group:/dev',
          `history:private:${[alice, bob].sort().join(':')}`,
          `correspondents:${alice}`,
          `correspondents:${bob}`,
          `last_seen:${alice}`,
        ].sort(),
      );
      for (const key of keys) {
        const ttl = await look().pttl(key);
        expect(ttl, key).toBeGreaterThan(CHAT_KEY_TTL_MS - 60_000);
        expect(ttl, key).toBeLessThanOrEqual(CHAT_KEY_TTL_MS);
      }
      await chat.setEnabled(roomId, true);
      expect(await look().exists(`${prefix}disabled`)).toBe(0);
      await chat.forget(roomId);
      expect(await keysOf(roomId)).toEqual([]);
    });

    it('forgets a room of more keys than one delete takes at once', async () => {
      const chat = store();
      const roomId = randomUUID();
      const alice = randomUUID();
      for (let i = 0; i < 1_200; i++) await chat.post(roomId, toGroup(alice, `/group-${i}`));
      expect((await keysOf(roomId)).length).toBe(1_201);
      await chat.forget(roomId);
      expect(await keysOf(roomId)).toEqual([]);
    });
  },
);
