/**
 * The crash cleanup's part of the Redis room stores (membership.redis.ts, waiting-room.redis.ts):
 * each record names the instance that wrote it; the removal of a dead instance's record happens
 * once however many instances try at the same time, never takes a record another instance wrote
 * since (a participant who came back with its id), and the last member's removal ends the room's
 * session as a last leave does; the room's keys expire on their own unless written or swept.
 * Two stores on two connections stand for two instances. Needs REDIS_URL.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Member } from '../../../src/signaling/room-state/membership-store.js';
import { createRedisMembershipStore, ROOM_RECORDS_TTL_MS } from '../../../src/signaling/room-state/membership.redis.js';
import { createRedisWaitingRoomStore } from '../../../src/signaling/room-state/waiting-room.redis.js';
import { guestRecord, T0 } from '../../support/room-stores.js';

const redisUrl = process.env.REDIS_URL || undefined;
const DAY_MS = 24 * 60 * 60 * 1000;

describe.skipIf(!redisUrl)('hosted records in Redis', () => {
  const [dead, live] = [randomUUID(), randomUUID()];
  let connections: Redis[];
  beforeAll(() => {
    connections = [new Redis(redisUrl!), new Redis(redisUrl!), new Redis(redisUrl!)];
  });
  afterAll(async () => {
    await Promise.all(connections.map((connection) => connection.quit()));
  });
  const look = () => connections[2]!;
  const member = (name: string): Member => ({ record: guestRecord(name) });
  const roomKeys = (roomId: string) => look().keys(`convene:signaling:room:${roomId}:*`);

  it("removes a dead instance's member once, keeps one that came back elsewhere, and ends the session with the last", async () => {
    const [onDead, onLive] = [createRedisMembershipStore(connections[0]!, dead), createRedisMembershipStore(connections[1]!, live)];
    const roomId = randomUUID();
    const [ada, bob, cyd] = [member('Ada'), member('Bob'), member('Cyd')];
    await onDead.join(roomId, ada, undefined, T0);
    await onDead.join(roomId, bob, undefined, T0);
    await onLive.join(roomId, cyd, undefined, T0);
    expect(await onLive.hosted!.hosts(roomId)).toEqual(
      new Map([
        [ada.record.id, dead],
        [bob.record.id, dead],
        [cyd.record.id, live],
      ]),
    );

    // only the host named is taken at its word
    expect(await onLive.hosted!.removeHostedBy(roomId, cyd.record.id, dead)).toBeUndefined();
    // two instances sweep at once: one removes
    const outcomes = await Promise.all([onLive, onDead, onLive].map((store) => store.hosted!.removeHostedBy(roomId, ada.record.id, dead)));
    expect(outcomes.filter(Boolean)).toEqual([{ record: ada, remaining: 2 }]);

    // Bob came back on the live instance with his id before the sweep got to him: his new record stays
    await onLive.join(roomId, bob, undefined, T0 + 1_000);
    expect(await onLive.hosted!.removeHostedBy(roomId, bob.record.id, dead)).toBeUndefined();
    expect((await onLive.members(roomId)).map((record) => record.id).sort()).toEqual([bob.record.id, cyd.record.id].sort());

    // the hosting instances: the dead one still, until a full look at the hosts finds it hosts nobody
    expect((await onLive.hosted!.instances(roomId)).sort()).toEqual([dead, live].sort());
    await onLive.hosted!.hosts(roomId);
    expect(await onLive.hosted!.instances(roomId)).toEqual([live]);

    await onLive.leave(roomId, cyd.record.id);
    await onDead.join(roomId, cyd, undefined, T0);
    expect((await onLive.hosted!.instances(roomId)).sort()).toEqual([dead, live].sort());
    expect(await onLive.hosted!.removeHostedBy(roomId, bob.record.id, live)).toEqual({ record: bob, remaining: 1 });
    expect(await onLive.hosted!.removeHostedBy(roomId, cyd.record.id, dead)).toEqual({ record: cyd, remaining: 0 });
    expect(await onLive.startedAt(roomId)).toBeUndefined();
    expect(await roomKeys(roomId)).toEqual([]);
  });

  it('lets the room keys expire unless written or swept', async () => {
    const store = createRedisMembershipStore(connections[0]!, live);
    const roomId = randomUUID();
    await store.join(roomId, member('Ada'), undefined, T0);
    const keys = (await roomKeys(roomId)).sort();
    expect(keys).toEqual(['changes', 'host_instances', 'hosts', 'members', 'started_at', 'versions'].map((name) => `convene:signaling:room:${roomId}:${name}`));
    for (const key of keys) {
      expect(await look().pttl(key)).toBeGreaterThan(ROOM_RECORDS_TTL_MS - DAY_MS);
      expect(await look().pttl(key)).toBeLessThanOrEqual(ROOM_RECORDS_TTL_MS);
      await look().pexpire(key, 60_000);
    }
    await store.hosted!.hosts(roomId); // a hosting instance's sweep
    for (const key of keys) expect(await look().pttl(key)).toBeGreaterThan(ROOM_RECORDS_TTL_MS - DAY_MS);
    expect(ROOM_RECORDS_TTL_MS).toBeGreaterThan(7 * DAY_MS); // outlives the chat's week
    await look().del(...keys);
  });

  it("removes a dead instance's waiting participant once, and forgets the host of one accepted", async () => {
    const [onDead, onLive] = [createRedisWaitingRoomStore(connections[0]!, dead), createRedisWaitingRoomStore(connections[1]!, live)];
    const roomId = randomUUID();
    const [wes, uma] = [guestRecord('Wes'), guestRecord('Uma')];
    await onDead.add(roomId, wes);
    await onDead.add(roomId, uma);
    expect(await onLive.hosted!.instances(roomId)).toEqual([dead]);
    expect(await onLive.hosted!.hosts(roomId)).toEqual(
      new Map([
        [wes.id, dead],
        [uma.id, dead],
      ]),
    );
    expect(await look().pttl(`convene:signaling:room:${roomId}:waiting`)).toBeGreaterThan(ROOM_RECORDS_TTL_MS - DAY_MS);

    expect(await onLive.hosted!.removeHostedBy(roomId, wes.id, live)).toBeUndefined();
    const outcomes = await Promise.all([onLive, onDead].map((store) => store.hosted!.removeHostedBy(roomId, wes.id, dead)));
    expect(outcomes.filter(Boolean)).toEqual([{ record: wes, remaining: 1 }]);
    expect(await onLive.waiting(roomId)).toEqual([uma]);

    // accepted: no longer waiting, so no sweep removes (or announces) it
    expect(await onLive.accept(roomId, uma.id)).toBe(true);
    expect(await onLive.hosted!.hosts(roomId)).toEqual(new Map());
    await onLive.forgetAccepted(roomId);
    expect(await roomKeys(roomId)).toEqual([]);
  });
});
