/**
 * The waiting-room store's contract, run against the in-process store and, when REDIS_URL is set,
 * the Redis store through two connections (two service instances sharing one room).
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { MemberRecord } from '../../../src/signaling/modules/control/membership-store.js';
import type { WaitingRoomStore } from '../../../src/signaling/modules/moderation/waiting-room-store.js';
import { createLocalWaitingRoomStore } from '../../../src/signaling/modules/moderation/waiting-room.local.js';
import { createRedisWaitingRoomStore } from '../../../src/signaling/modules/moderation/waiting-room.redis.js';

const redisUrl = process.env.REDIS_URL || undefined;

const waiter = (name: string): MemberRecord => ({
  id: randomUUID(),
  control: {
    display_name: name,
    role: 'guest',
    participation_kind: 'guest',
    hand_is_up: false,
    joined_at: '2026-05-04T09:30:00.000Z',
    left_at: null,
    hand_updated_at: '2026-05-04T09:30:00.000Z',
    is_room_owner: false,
  },
});

const byId = (records: MemberRecord[]) => [...records].sort((a, b) => a.id.localeCompare(b.id));

/** The cases, for two stores over the same state (the same store twice in process). */
function waitingRoomContract(stores: () => [WaitingRoomStore, WaitingRoomStore]) {
  it('lists who waits until they leave', async () => {
    const [store, other] = stores();
    const roomId = randomUUID();
    const [ada, bob] = [waiter('Ada'), waiter('Bob')];
    await store.add(roomId, ada);
    await other.add(roomId, bob);
    expect(byId(await store.waiting(roomId))).toEqual(byId([ada, bob]));
    expect(await other.remove(roomId, ada.id)).toBe(true);
    expect(await store.remove(roomId, ada.id)).toBe(false);
    expect(await store.waiting(roomId)).toEqual([bob]);
    expect(await store.isAccepted(roomId, ada.id)).toBe(false);
    await store.remove(roomId, bob.id);
  });

  it('moves an accepted participant out of the waiting list, once', async () => {
    const [store, other] = stores();
    const roomId = randomUUID();
    const ada = waiter('Ada');
    await store.add(roomId, ada);
    expect(await other.accept(roomId, ada.id)).toBe(true);
    expect(await store.waiting(roomId)).toEqual([]);
    expect(await store.isAccepted(roomId, ada.id)).toBe(true);
    expect(await store.accept(roomId, ada.id)).toBe(false);
    // accepted is no longer waiting: leaving now removes nothing
    expect(await store.remove(roomId, ada.id)).toBe(false);
    expect(await other.isAccepted(roomId, ada.id)).toBe(true);
    await store.forgetAccepted(roomId);
  });

  it('accepts nobody who does not wait', async () => {
    const [store] = stores();
    const roomId = randomUUID();
    const id = randomUUID();
    expect(await store.accept(roomId, id)).toBe(false);
    expect(await store.isAccepted(roomId, id)).toBe(false);
  });

  it('lets one of many concurrent accepts from both instances win', async () => {
    const pair = stores();
    const roomId = randomUUID();
    const ada = waiter('Ada');
    await pair[0].add(roomId, ada);
    const outcomes = await Promise.all(Array.from({ length: 10 }, (_, i) => pair[i % 2]!.accept(roomId, ada.id)));
    expect(outcomes.filter(Boolean)).toHaveLength(1);
    await pair[0].forgetAccepted(roomId);
  });

  it('forgets the accepted participants of an emptied room, not those waiting', async () => {
    const [store, other] = stores();
    const roomId = randomUUID();
    const [ada, bob] = [waiter('Ada'), waiter('Bob')];
    await store.add(roomId, ada);
    await store.add(roomId, bob);
    await store.accept(roomId, ada.id);
    await other.forgetAccepted(roomId);
    expect(await store.isAccepted(roomId, ada.id)).toBe(false);
    expect(await store.waiting(roomId)).toEqual([bob]);
    await store.remove(roomId, bob.id);
  });

  it('keeps rooms apart', async () => {
    const [store, other] = stores();
    const [first, second] = [randomUUID(), randomUUID()];
    const ada = waiter('Ada');
    await store.add(first, ada);
    expect(await other.waiting(second)).toEqual([]);
    expect(await other.accept(second, ada.id)).toBe(false);
    expect(await other.remove(second, ada.id)).toBe(false);
    expect(await store.accept(first, ada.id)).toBe(true);
    expect(await store.isAccepted(second, ada.id)).toBe(false);
    await store.forgetAccepted(first);
  });
}

describe('in-process waiting-room store', () => {
  waitingRoomContract(() => {
    const store = createLocalWaitingRoomStore();
    return [store, store];
  });
});

describe.skipIf(!redisUrl)('Redis waiting-room store', () => {
  const clients: Redis[] = [];
  beforeAll(() => {
    clients.push(new Redis(redisUrl!), new Redis(redisUrl!));
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.quit()));
  });
  waitingRoomContract(() => [createRedisWaitingRoomStore(clients[0]!), createRedisWaitingRoomStore(clients[1]!)]);

  it('uses the room keys of the design, and leaves none behind', async () => {
    const store = createRedisWaitingRoomStore(clients[0]!);
    const roomId = randomUUID();
    const [ada, bob] = [waiter('Ada'), waiter('Bob')];
    await store.add(roomId, ada);
    await store.add(roomId, bob);
    await store.accept(roomId, ada.id);
    expect(await clients[1]!.hkeys(`convene:signaling:room:${roomId}:waiting`)).toEqual([bob.id]);
    expect(await clients[1]!.smembers(`convene:signaling:room:${roomId}:accepted`)).toEqual([ada.id]);
    await store.remove(roomId, bob.id);
    await store.forgetAccepted(roomId);
    expect(await clients[1]!.keys(`convene:signaling:room:${roomId}:*`)).toEqual([]);
  });
});
