/**
 * The media store's contract, run against the in-process store and, when REDIS_URL is set, against
 * two Redis stores on separate connections (two instances sharing one room): session states,
 * presenters, force-mute, speakers, the room's Janus room (first assignment wins, compare-and-delete,
 * found by its server), feed ids unique under concurrency, publishers, and a participant or a room
 * forgotten whole; and, in Redis, the key layout, every key with a time to live that writes extend,
 * no key left once forgotten (by SCAN), and corrupt values taken for absent.
 */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { JanusRoomAssignment, MediaStore, PublisherEntry, SpeakerState } from '../../../src/signaling/modules/media/media-store.js';
import { createLocalMediaStore } from '../../../src/signaling/modules/media/media-store.local.js';
import { createRedisMediaStore, MEDIA_KEY_TTL_MS } from '../../../src/signaling/modules/media/media-store.redis.js';
import { describeRoomStore, T0 } from '../../support/room-stores.js';

/** A Janus server of this run alone (the Redis server is shared). */
const server = () => `ws://janus-${randomUUID()}.test:8188/janus`;
const assignment = (janusServer = server(), janusRoomId = 1 + Math.floor(Math.random() * 2 ** 40)): JanusRoomAssignment => ({
  server: janusServer,
  janusRoomId,
});
const speaker = (participant: string, is_speaking: boolean, seconds = 0): SpeakerState => ({
  participant,
  is_speaking,
  updated_at: new Date(T0 + seconds * 1_000).toISOString(),
});
const sorted = <T>(items: T[], key: (item: T) => string) => [...items].sort((a, b) => key(a).localeCompare(key(b)));
const on = { audio: true, video: true };
const muted = { audio: false, video: true };

describeRoomStore<MediaStore>(
  'media store',
  { local: createLocalMediaStore, redis: createRedisMediaStore },
  (stores) => {
    const room = () => randomUUID();
    const [alice, bob, carol] = [randomUUID(), randomUUID(), randomUUID()];

    it('keeps each participant’s session states per type, for every instance', async () => {
      const [one, two] = stores();
      const roomId = room();
      expect(await two.sessionStates(roomId, [alice])).toEqual(new Map());
      await one.setSessionState(roomId, alice, 'video', on);
      await one.setSessionState(roomId, alice, 'screen', muted);
      await one.setSessionState(roomId, bob, 'video', muted);
      await two.setSessionState(roomId, bob, 'video', on);
      expect(await two.sessionStates(roomId, [alice, bob, carol])).toEqual(
        new Map([
          [alice, { video: on, screen: muted }],
          [bob, { video: on }],
        ]),
      );
      expect(await two.deleteSessionState(roomId, alice, 'screen')).toBe(true);
      expect(await two.deleteSessionState(roomId, bob, 'video')).toBe(true);
      expect(await one.deleteSessionState(roomId, bob, 'video')).toBe(false);
      expect(await two.deleteSessionState(roomId, carol, 'video')).toBe(false);
      expect(await one.sessionStates(roomId, [alice, bob, carol])).toStrictEqual(new Map([[alice, { video: on }]]));
      expect(await one.sessionStates(roomId, [])).toEqual(new Map());
    });

    it('shows every asked-for participant as a peer: its sessions and whether it presents', async () => {
      const [one, two] = stores();
      const roomId = room();
      await one.setSessionState(roomId, alice, 'screen', on);
      await one.addPresenters(roomId, [alice, bob]);
      expect(await two.peers(roomId, [alice, bob, carol])).toEqual(
        new Map([
          [alice, { screen: on, is_presenter: true }],
          [bob, { is_presenter: true }],
          [carol, { is_presenter: false }],
        ]),
      );
      expect(await two.peers(roomId, [])).toEqual(new Map());
    });

    it('adds and removes presenters, answering whom each call changed', async () => {
      const [one, two] = stores();
      const roomId = room();
      expect(await one.addPresenters(roomId, [alice, bob, alice])).toEqual([alice, bob]);
      expect(await two.addPresenters(roomId, [bob, carol])).toEqual([carol]);
      expect(await one.presenters(roomId, [alice, bob, carol, randomUUID()])).toEqual(new Set([alice, bob, carol]));
      expect(await two.removePresenters(roomId, [alice, randomUUID(), alice])).toEqual([alice]);
      expect(await one.removePresenters(roomId, [alice])).toEqual([]);
      expect(await one.presenters(roomId, [alice, bob])).toEqual(new Set([bob]));
      expect(await one.addPresenters(roomId, [])).toEqual([]);
      expect(await one.removePresenters(roomId, [])).toEqual([]);
      expect(await one.presenters(roomId, [])).toEqual(new Set());
    });

    it('lets exactly one of many concurrent calls on every instance add or remove a presenter', async () => {
      const pair = stores();
      const roomId = room();
      const added = await Promise.all(Array.from({ length: 10 }, (_, i) => pair[i % 2]!.addPresenters(roomId, [alice])));
      expect(added.flat()).toEqual([alice]);
      const removed = await Promise.all(Array.from({ length: 10 }, (_, i) => pair[i % 2]!.removePresenters(roomId, [alice])));
      expect(removed.flat()).toEqual([alice]);
    });

    it('switches force-mute on with its allow list, and off, for every instance', async () => {
      const [one, two] = stores();
      const roomId = room();
      expect(await two.forceMute(roomId)).toEqual({ type: 'disabled' });
      await one.setForceMute(roomId, [alice, bob]);
      expect(await two.forceMute(roomId)).toEqual({ type: 'enabled', allow_list: [alice, bob] });
      await two.setForceMute(roomId, []);
      expect(await one.forceMute(roomId)).toEqual({ type: 'enabled', allow_list: [] });
      await one.setForceMute(roomId, undefined);
      expect(await two.forceMute(roomId)).toEqual({ type: 'disabled' });
      await one.setForceMute(roomId, undefined);
      expect(await two.forceMute(roomId)).toEqual({ type: 'disabled' });
    });

    it('keeps the last speaker state of each participant', async () => {
      const [one, two] = stores();
      const roomId = room();
      expect(await one.speakers(roomId)).toEqual([]);
      await one.setSpeaking(roomId, speaker(alice, true, 1));
      await two.setSpeaking(roomId, speaker(bob, true, 2));
      await one.setSpeaking(roomId, speaker(alice, false, 3));
      expect(sorted(await two.speakers(roomId), (s) => s.participant)).toEqual(sorted([speaker(alice, false, 3), speaker(bob, true, 2)], (s) => s.participant));
    });

    it('assigns the room its Janus room once: the first assignment stays, whoever asks after', async () => {
      const [one, two] = stores();
      const roomId = room();
      expect(await two.janusRoom(roomId)).toBeUndefined();
      const first = assignment();
      expect(await one.assignJanusRoom(roomId, first)).toEqual(first);
      expect(await two.assignJanusRoom(roomId, assignment())).toEqual(first);
      expect(await two.janusRoom(roomId)).toEqual(first);
      await one.forgetRoom(roomId);
    });

    it('lets the first of many concurrent assignments on every instance win, and answers it to all', async () => {
      const pair = stores();
      const roomId = room();
      const candidates = Array.from({ length: 20 }, () => assignment());
      const answered = await Promise.all(candidates.map((candidate, i) => pair[i % 2]!.assignJanusRoom(roomId, candidate)));
      const winner = answered[0]!;
      expect(candidates).toContainEqual(winner);
      expect(answered).toEqual(candidates.map(() => winner));
      expect(await pair[1].janusRoom(roomId)).toEqual(winner);
      await pair[0].forgetRoom(roomId);
    });

    it('releases the assignment only while it is the one expected', async () => {
      const [one, two] = stores();
      const roomId = room();
      const assigned = await one.assignJanusRoom(roomId, assignment());
      expect(await two.releaseJanusRoom(roomId, { ...assigned, janusRoomId: assigned.janusRoomId + 1 })).toBe(false);
      expect(await two.releaseJanusRoom(roomId, { ...assigned, server: server() })).toBe(false);
      expect(await one.janusRoom(roomId)).toEqual(assigned);
      expect(await two.releaseJanusRoom(roomId, assigned)).toBe(true);
      expect(await one.janusRoom(roomId)).toBeUndefined();
      expect(await one.releaseJanusRoom(roomId, assigned)).toBe(false);
      const next = assignment();
      expect(await one.assignJanusRoom(roomId, next)).toEqual(next);
      expect(await two.releaseJanusRoom(roomId, assigned)).toBe(false);
      expect(await two.janusRoom(roomId)).toEqual(next);
      await one.forgetRoom(roomId);
    });

    it('lets exactly one of many concurrent releases of the same assignment delete it', async () => {
      const pair = stores();
      const roomId = room();
      const assigned = await pair[0].assignJanusRoom(roomId, assignment());
      const released = await Promise.all(Array.from({ length: 10 }, (_, i) => pair[i % 2]!.releaseJanusRoom(roomId, assigned)));
      expect(released.filter(Boolean)).toHaveLength(1);
    });

    it('refuses an assignment no store could keep, and a feed id that is not one', async () => {
      const [store] = stores();
      const roomId = room();
      for (const bad of [assignment(server(), 0), assignment(server(), 1.5), assignment(server(), 2 ** 53), assignment('', 7)]) {
        await expect(store.assignJanusRoom(roomId, bad)).rejects.toThrow(RangeError);
      }
      expect(await store.janusRoom(roomId)).toBeUndefined();
      for (const feedId of [0, -1, 2.5, Number.NaN]) await expect(store.setPublisher(roomId, alice, 'video', { feedId })).rejects.toThrow(RangeError);
      expect(await store.publishers(roomId)).toEqual([]);
    });

    it('hands out feed ids 1, 2, 3 … per room', async () => {
      const [one, two] = stores();
      const [roomId, neighbour] = [room(), room()];
      expect([await one.nextFeedId(roomId), await two.nextFeedId(roomId), await one.nextFeedId(roomId)]).toEqual([1, 2, 3]);
      expect(await two.nextFeedId(neighbour)).toBe(1);
      await one.forgetRoom(roomId);
      await one.forgetRoom(neighbour);
    });

    it('never hands out a feed id twice, however many instances ask at once', async () => {
      const pair = stores();
      const roomId = room();
      const ids = await Promise.all(Array.from({ length: 50 }, (_, i) => pair[i % 2]!.nextFeedId(roomId)));
      expect([...ids].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      await pair[0].forgetRoom(roomId);
    });

    it('keeps each publisher’s feed id per session type, and lists them all', async () => {
      const [one, two] = stores();
      const roomId = room();
      expect(await two.publisher(roomId, alice, 'video')).toBeUndefined();
      await one.setPublisher(roomId, alice, 'video', { feedId: 1 });
      await one.setPublisher(roomId, alice, 'screen', { feedId: 2 });
      await two.setPublisher(roomId, bob, 'video', { feedId: 3 });
      await two.setPublisher(roomId, bob, 'video', { feedId: 4 });
      expect(await two.publisher(roomId, alice, 'screen')).toEqual({ feedId: 2 });
      expect(await one.publisher(roomId, bob, 'video')).toEqual({ feedId: 4 });
      expect(await one.publisher(roomId, bob, 'screen')).toBeUndefined();
      const key = (entry: PublisherEntry) => `${entry.participantId} ${entry.type}`;
      expect(sorted(await two.publishers(roomId), key)).toEqual(
        sorted(
          [
            { participantId: alice, type: 'video', record: { feedId: 1 } },
            { participantId: alice, type: 'screen', record: { feedId: 2 } },
            { participantId: bob, type: 'video', record: { feedId: 4 } },
          ],
          key,
        ),
      );
      // whether there was one: whoever deleted it announces the stream's end
      expect(await two.deletePublisher(roomId, alice, 'video')).toBe(true);
      expect(await one.deletePublisher(roomId, alice, 'video')).toBe(false);
      expect(await two.deletePublisher(roomId, carol, 'video')).toBe(false);
      expect(await one.publisher(roomId, alice, 'video')).toBeUndefined();
      expect(sorted(await one.publishers(roomId), key)).toEqual(
        sorted(
          [
            { participantId: alice, type: 'screen', record: { feedId: 2 } },
            { participantId: bob, type: 'video', record: { feedId: 4 } },
          ],
          key,
        ),
      );
    });

    it('forgets everything of a participant that left, and nothing of the others or of the room', async () => {
      const [one, two] = stores();
      const roomId = room();
      const assigned = await one.assignJanusRoom(roomId, assignment());
      await one.setForceMute(roomId, [alice]);
      for (const id of [alice, bob]) {
        await one.setSessionState(roomId, id, 'video', on);
        await one.setSessionState(roomId, id, 'screen', muted);
        await one.addPresenters(roomId, [id]);
        await one.setSpeaking(roomId, speaker(id, true));
        await one.setPublisher(roomId, id, 'video', { feedId: await one.nextFeedId(roomId) });
        await one.setPublisher(roomId, id, 'screen', { feedId: await one.nextFeedId(roomId) });
      }
      await two.forgetParticipant(roomId, alice);
      expect(await one.peers(roomId, [alice, bob])).toEqual(
        new Map([
          [alice, { is_presenter: false }],
          [bob, { video: on, screen: muted, is_presenter: true }],
        ]),
      );
      expect(await one.speakers(roomId)).toEqual([speaker(bob, true)]);
      expect((await one.publishers(roomId)).map((entry) => entry.participantId)).toEqual([bob, bob]);
      expect(await one.janusRoom(roomId)).toEqual(assigned);
      expect(await one.forceMute(roomId)).toEqual({ type: 'enabled', allow_list: [alice] });
      expect(await one.nextFeedId(roomId)).toBe(5);
      await two.forgetParticipant(roomId, carol); // nothing to forget
      await one.forgetRoom(roomId);
    });

    it('forgets everything of an emptied room: the next session starts afresh', async () => {
      const [one, two] = stores();
      const [roomId, neighbour] = [room(), room()];
      const janus = server();
      for (const id of [roomId, neighbour]) {
        await one.assignJanusRoom(id, assignment(janus));
        await one.setSessionState(id, alice, 'video', on);
        await one.addPresenters(id, [alice]);
        await one.setForceMute(id, []);
        await one.setSpeaking(id, speaker(alice, true));
        await one.setPublisher(id, alice, 'video', { feedId: await one.nextFeedId(id) });
      }
      await two.forgetRoom(roomId);
      expect(await one.peers(roomId, [alice])).toEqual(new Map([[alice, { is_presenter: false }]]));
      expect(await one.forceMute(roomId)).toEqual({ type: 'disabled' });
      expect(await one.speakers(roomId)).toEqual([]);
      expect(await one.janusRoom(roomId)).toBeUndefined();
      expect(await one.publishers(roomId)).toEqual([]);
      expect(await one.nextFeedId(roomId)).toBe(1);
      expect(await two.peers(neighbour, [alice])).toEqual(new Map([[alice, { video: on, is_presenter: true }]]));
      expect(await two.nextFeedId(neighbour)).toBe(2);
      await two.forgetRoom(roomId);
      await two.forgetRoom(roomId); // nothing left to forget
      await two.forgetRoom(neighbour);
    });

    it('hands out copies that do not change what is stored', async () => {
      const [one, two] = stores();
      const roomId = room();
      const state = { ...on };
      await one.setSessionState(roomId, alice, 'video', state);
      state.audio = false;
      (await one.sessionStates(roomId, [alice])).get(alice)!.video!.video = false;
      const allowList = [alice];
      await one.setForceMute(roomId, allowList);
      allowList.push(bob);
      const forceMute = await one.forceMute(roomId);
      if (forceMute.type === 'enabled') forceMute.allow_list.push(carol);
      const candidate = assignment();
      const assigned = await one.assignJanusRoom(roomId, { ...candidate });
      assigned.janusRoomId += 1;
      const speaking = speaker(alice, true);
      await one.setSpeaking(roomId, speaking);
      speaking.is_speaking = false;
      expect(await two.sessionStates(roomId, [alice])).toEqual(new Map([[alice, { video: on }]]));
      expect(await two.forceMute(roomId)).toEqual({ type: 'enabled', allow_list: [alice] });
      expect(await two.janusRoom(roomId)).toEqual(candidate);
      expect(await two.speakers(roomId)).toEqual([speaker(alice, true)]);
      await one.forgetRoom(roomId);
    });
  },
  (store, look) => {
    const roomKeys = async (roomId: string) => {
      const keys: string[] = [];
      let cursor = '0';
      do {
        const [next, batch] = await look().scan(cursor, 'MATCH', `convene:signaling:room:${roomId}:*`, 'COUNT', 1000);
        keys.push(...batch);
        cursor = next;
      } while (cursor !== '0');
      return keys.sort();
    };
    const prefixOf = (roomId: string) => `convene:signaling:room:${roomId}:media:`;
    const [alice, bob] = [randomUUID(), randomUUID()];

    /** A room with something under every key, assigned to `janus`. */
    const filled = async (media: MediaStore, roomId: string, janus: string) => {
      await media.assignJanusRoom(roomId, assignment(janus));
      for (const id of [alice, bob]) {
        await media.setSessionState(roomId, id, 'video', on);
        await media.setSessionState(roomId, id, 'screen', on);
        await media.addPresenters(roomId, [id]);
        await media.setSpeaking(roomId, speaker(id, true));
        await media.setPublisher(roomId, id, 'video', { feedId: await media.nextFeedId(roomId) });
        await media.setPublisher(roomId, id, 'screen', { feedId: await media.nextFeedId(roomId) });
      }
      await media.setForceMute(roomId, [alice]);
    };

    it(`keeps every key under the room's media prefix, each expiring within ${MEDIA_KEY_TTL_MS / 86_400_000} days, and none once forgotten`, async () => {
      const media = store();
      const [roomId, janus] = [randomUUID(), server()];
      await media.peers(roomId, [alice]);
      await media.speakers(roomId);
      expect(await roomKeys(roomId)).toEqual([]);
      await filled(media, roomId, janus);
      const keys = await roomKeys(roomId);
      expect(keys.map((key) => key.slice(prefixOf(roomId).length))).toEqual(
        ['sessions', 'presenters', 'force_mute', 'speakers', 'janus_room', 'feed_ids', 'publishers'].sort(),
      );
      for (const key of keys) {
        const ttl = await look().pttl(key);
        expect(ttl, key).toBeGreaterThan(MEDIA_KEY_TTL_MS - 60_000);
        expect(ttl, key).toBeLessThanOrEqual(MEDIA_KEY_TTL_MS);
      }
      await media.forgetRoom(roomId);
      expect(await roomKeys(roomId)).toEqual([]);
    });

    it('leaves no trace of a forgotten participant in any key, and deletes the hashes and sets it emptied', async () => {
      const media = store();
      const [roomId, janus] = [randomUUID(), server()];
      await filled(media, roomId, janus);
      await media.forgetParticipant(roomId, alice);
      const prefix = prefixOf(roomId);
      for (const name of ['sessions', 'speakers', 'publishers']) {
        expect(
          (await look().hkeys(prefix + name)).filter((field) => field.startsWith(alice)),
          name,
        ).toEqual([]);
      }
      expect(await look().smembers(`${prefix}presenters`)).toEqual([bob]);
      await media.forgetParticipant(roomId, bob);
      expect((await roomKeys(roomId)).map((key) => key.slice(prefix.length))).toEqual(['feed_ids', 'force_mute', 'janus_room']);
      await media.forgetRoom(roomId);
      expect(await roomKeys(roomId)).toEqual([]);
    });

    it('extends the lifetime of every key of the room on every write that adds', async () => {
      const media = store();
      const [roomId, janus] = [randomUUID(), server()];
      await filled(media, roomId, janus);
      const keys = await roomKeys(roomId);
      for (const key of keys) await look().pexpire(key, 60_000);
      await media.setSpeaking(roomId, speaker(bob, false, 5));
      for (const key of keys) expect(await look().pttl(key), key).toBeGreaterThan(MEDIA_KEY_TTL_MS - 60_000);
      await media.forgetRoom(roomId);
    });

    it('takes corrupt values for absent, and writes over them', async () => {
      const media = store();
      const [roomId, janus] = [randomUUID(), server()];
      const prefix = prefixOf(roomId);
      const redis = look();
      await media.setSessionState(roomId, alice, 'video', on);
      await redis.hset(`${prefix}sessions`, `${alice}:screen`, '{"audio":1,"video":true}', `${bob}:video`, 'not json', `${bob}:screen`, 'null');
      expect(await media.sessionStates(roomId, [alice, bob])).toEqual(new Map([[alice, { video: on }]]));
      expect(await media.peers(roomId, [bob])).toEqual(new Map([[bob, { is_presenter: false }]]));

      for (const corrupt of ['{', '{"allow":[]}', '[1,2]']) {
        await redis.set(`${prefix}force_mute`, corrupt);
        expect(await media.forceMute(roomId)).toEqual({ type: 'disabled' });
      }

      await media.setSpeaking(roomId, speaker(alice, true));
      await redis.hset(`${prefix}speakers`, bob, '{"is_speaking":true}', randomUUID(), '{"is_speaking":true,"updated_at":"yesterday"}', randomUUID(), '');
      expect(await media.speakers(roomId)).toEqual([speaker(alice, true)]);

      await media.setPublisher(roomId, alice, 'video', { feedId: 7 });
      await redis.hset(`${prefix}publishers`, `${alice}:screen`, 'seven', `${bob}:video`, '0', `${bob}:screen`, 'x7', `${bob}:audio`, '8', 'nobody', '9');
      expect(await media.publisher(roomId, alice, 'screen')).toBeUndefined();
      expect(await media.publishers(roomId)).toEqual([{ participantId: alice, type: 'video', record: { feedId: 7 } }]);

      await redis.set(`${prefix}feed_ids`, 'many');
      expect(await media.nextFeedId(roomId)).toBe(10); // above every feed id stored, even those of corrupt fields
      expect(await media.nextFeedId(roomId)).toBe(11);
      await redis.set(`${prefix}feed_ids`, '-3');
      expect(await media.nextFeedId(roomId)).toBe(10);

      for (const corrupt of ['', 'garbage', '0 ws://x', '12', '12 ', '1.5 ws://x', '99999999999999999 ws://x', `${2 ** 53} ws://x`]) {
        await redis.set(`${prefix}janus_room`, corrupt);
        expect(await media.janusRoom(roomId), corrupt).toBeUndefined();
      }
      const replacement = assignment(janus);
      expect(await media.assignJanusRoom(roomId, replacement)).toEqual(replacement);
      await media.forgetRoom(roomId);
      expect(await roomKeys(roomId)).toEqual([]);
    });

    it('keeps a server URL and participant ids with colons and spaces apart', async () => {
      const media = store();
      const roomId = randomUUID();
      const janus = `wss://user:pass@janus ${randomUUID()}:8989/ws`;
      const odd = `${randomUUID()}:video:x y`;
      const assigned = assignment(janus);
      expect(await media.assignJanusRoom(roomId, assigned)).toEqual(assigned);
      await media.setPublisher(roomId, odd, 'screen', { feedId: 3 });
      await media.setSessionState(roomId, odd, 'video', muted);
      expect(await media.publishers(roomId)).toEqual([{ participantId: odd, type: 'screen', record: { feedId: 3 } }]);
      expect(await media.sessionStates(roomId, [odd])).toEqual(new Map([[odd, { video: muted }]]));
      expect(await media.releaseJanusRoom(roomId, assigned)).toBe(true);
      await media.forgetRoom(roomId);
      expect(await roomKeys(roomId)).toEqual([]);
    });
  },
);
