/**
 * The waiting-room store's contract, run against the in-process store and, when REDIS_URL is set,
 * the Redis store through two connections (two service instances sharing one room).
 */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';

import type { WaitingRoomStore } from '../../../src/signaling/room-state/waiting-room-store.js';
import { createLocalWaitingRoomStore } from '../../../src/signaling/room-state/waiting-room.local.js';
import { createRedisWaitingRoomStore } from '../../../src/signaling/room-state/waiting-room.redis.js';
import { byId, describeRoomStore, guestRecord as waiter } from '../../support/room-stores.js';

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

  it("takes back one participant's acceptance (a moderator removed it), and no other's", async () => {
    const [store, other] = stores();
    const roomId = randomUUID();
    const [ada, bob] = [waiter('Ada'), waiter('Bob')];
    await store.add(roomId, ada);
    await store.add(roomId, bob);
    await store.accept(roomId, ada.id);
    await store.accept(roomId, bob.id);
    await other.unaccept(roomId, ada.id);
    expect(await store.isAccepted(roomId, ada.id)).toBe(false);
    expect(await store.isAccepted(roomId, bob.id)).toBe(true);
    await other.unaccept(roomId, ada.id); // again, or never accepted: nothing to take back
    await other.unaccept(roomId, randomUUID());
    expect(await other.isAccepted(roomId, bob.id)).toBe(true);
    await store.unaccept(roomId, bob.id);
    expect(await other.isAccepted(roomId, bob.id)).toBe(false);
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

describeRoomStore('waiting-room store', { local: createLocalWaitingRoomStore, redis: createRedisWaitingRoomStore }, waitingRoomContract, (store, look) => {
  it('uses the room keys of the design, and leaves none behind', async () => {
    const roomId = randomUUID();
    const [ada, bob] = [waiter('Ada'), waiter('Bob')];
    await store().add(roomId, ada);
    await store().add(roomId, bob);
    await store().accept(roomId, ada.id);
    expect(await look().hkeys(`convene:signaling:room:${roomId}:waiting`)).toEqual([bob.id]);
    expect(await look().smembers(`convene:signaling:room:${roomId}:accepted`)).toEqual([ada.id]);
    await store().remove(roomId, bob.id);
    await store().forgetAccepted(roomId);
    expect(await look().keys(`convene:signaling:room:${roomId}:*`)).toEqual([]);
  });

  it('leaves no key behind once the last acceptance is taken back', async () => {
    const roomId = randomUUID();
    const ada = waiter('Ada');
    await store().add(roomId, ada);
    await store().accept(roomId, ada.id);
    await store().unaccept(roomId, ada.id);
    expect(await look().keys(`convene:signaling:room:${roomId}:*`)).toEqual([]);
  });
});
