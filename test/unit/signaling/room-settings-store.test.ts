/**
 * The room settings store's contract (the moderators' room switches: raised hands, the waiting room
 * switched on or off for the meeting), run against the in-process store and, when REDIS_URL is set, the Redis store through
 * two connections (two service instances sharing one room).
 */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';

import type { RoomSettingsStore } from '../../../src/signaling/room-state/room-settings-store.js';
import { createLocalRoomSettingsStore } from '../../../src/signaling/room-state/room-settings.local.js';
import { createRedisRoomSettingsStore } from '../../../src/signaling/room-state/room-settings.redis.js';
import { ROOM_RECORDS_TTL_MS } from '../../../src/signaling/room-state/membership.redis.js';
import { describeRoomStore } from '../../support/room-stores.js';

const DEFAULTS = { raiseHandsEnabled: true };

function roomSettingsContract(stores: () => [RoomSettingsStore, RoomSettingsStore]) {
  it('has hands allowed and the waiting room as the room has it, until a moderator switches', async () => {
    const [store] = stores();
    expect(await store.read(randomUUID())).toEqual(DEFAULTS);
  });

  it('switches raised hands off and on for every instance', async () => {
    const [store, other] = stores();
    const roomId = randomUUID();
    await store.setRaiseHandsEnabled(roomId, false);
    expect(await other.read(roomId)).toEqual({ raiseHandsEnabled: false });
    await store.setRaiseHandsEnabled(roomId, false);
    expect((await other.read(roomId)).raiseHandsEnabled).toBe(false);
    await other.setRaiseHandsEnabled(roomId, true);
    expect(await store.read(roomId)).toEqual(DEFAULTS);
    await other.setRaiseHandsEnabled(roomId, true);
    expect(await store.read(roomId)).toEqual(DEFAULTS);
  });

  it('switches the waiting room on and off for every instance, answering the switch it replaced', async () => {
    const [store, other] = stores();
    const roomId = randomUUID();
    expect(await store.setWaitingRoom(roomId, false)).toBeUndefined();
    expect(await other.read(roomId)).toEqual({ raiseHandsEnabled: true, waitingRoom: false });
    expect(await other.setWaitingRoom(roomId, true)).toBe(false);
    expect(await store.read(roomId)).toEqual({ raiseHandsEnabled: true, waitingRoom: true });
    expect(await store.setWaitingRoom(roomId, true)).toBe(true);
    expect(await other.setWaitingRoom(roomId, false)).toBe(true);
    await store.forget(roomId);
  });

  it('turns the waiting room on once: only the first of many concurrent calls from both instances found no switch', async () => {
    const pair = stores();
    const roomId = randomUUID();
    const previous = await Promise.all(Array.from({ length: 10 }, (_, i) => pair[i % 2]!.setWaitingRoom(roomId, true)));
    expect(previous.filter((switched) => switched === undefined)).toHaveLength(1);
    expect(previous.filter((switched) => switched === true)).toHaveLength(9);
    expect(await pair[1].read(roomId)).toEqual({ raiseHandsEnabled: true, waitingRoom: true });
    await pair[0].forget(roomId);
  });

  it("forgets every switch of an emptied room, and no other room's", async () => {
    const [store, other] = stores();
    const [roomId, neighbour] = [randomUUID(), randomUUID()];
    for (const id of [roomId, neighbour]) {
      await store.setRaiseHandsEnabled(id, false);
      await store.setWaitingRoom(id, false);
    }
    await other.forget(roomId);
    expect(await store.read(roomId)).toEqual(DEFAULTS);
    expect(await store.setWaitingRoom(roomId, true)).toBeUndefined();
    expect(await other.read(neighbour)).toEqual({ raiseHandsEnabled: false, waitingRoom: false });
    await store.forget(roomId);
    await store.forget(neighbour);
  });
}

describeRoomStore('room settings store', { local: createLocalRoomSettingsStore, redis: createRedisRoomSettingsStore }, roomSettingsContract, (store, look) => {
  it('keeps one hash of the switches away from their defaults, and leaves no key once they are back', async () => {
    const roomId = randomUUID();
    const key = `convene:signaling:room:${roomId}:settings`;
    await store().setRaiseHandsEnabled(roomId, true);
    expect(await look().exists(key)).toBe(0);
    await store().setRaiseHandsEnabled(roomId, false);
    await store().setWaitingRoom(roomId, false);
    expect((await look().hkeys(key)).sort()).toEqual(['raise_hands_disabled', 'waiting_room']);
    // no room's switches outlive its records: a room nobody comes back to leaves nothing for good
    expect(await look().pttl(key)).toBeGreaterThan(ROOM_RECORDS_TTL_MS - 60_000);
    expect(await look().pttl(key)).toBeLessThanOrEqual(ROOM_RECORDS_TTL_MS);
    await store().forget(roomId);
    expect(await look().keys(`convene:signaling:room:${roomId}:*`)).toEqual([]);
    await store().setRaiseHandsEnabled(roomId, false);
    await store().setRaiseHandsEnabled(roomId, true);
    expect(await look().keys(`convene:signaling:room:${roomId}:*`)).toEqual([]);
  });
});
