/**
 * The Redis room settings store: `convene:signaling:room:<roomId>:settings`, a hash holding only
 * the switches away from their defaults (`raise_hands_disabled`, `waiting_room_forced`), so a room
 * with none has no key.
 */
import type { Redis } from 'ioredis';
import type { RoomSettingsStore } from './room-settings-store.js';

const settingsKey = (roomId: string) => `convene:signaling:room:${roomId}:settings`;
const RAISE_HANDS_DISABLED = 'raise_hands_disabled';
const WAITING_ROOM_FORCED = 'waiting_room_forced';

export function createRedisRoomSettingsStore(redis: Redis): RoomSettingsStore {
  return {
    async read(roomId) {
      const [raiseHandsDisabled, waitingRoomForced] = await redis.hmget(settingsKey(roomId), RAISE_HANDS_DISABLED, WAITING_ROOM_FORCED);
      return { raiseHandsEnabled: raiseHandsDisabled === null, waitingRoomForced: waitingRoomForced !== null };
    },
    async setRaiseHandsEnabled(roomId, enabled) {
      if (enabled) await redis.hdel(settingsKey(roomId), RAISE_HANDS_DISABLED);
      else await redis.hset(settingsKey(roomId), RAISE_HANDS_DISABLED, '1');
    },
    async forceWaitingRoom(roomId) {
      return (await redis.hsetnx(settingsKey(roomId), WAITING_ROOM_FORCED, '1')) === 1;
    },
    async forget(roomId) {
      await redis.del(settingsKey(roomId));
    },
  };
}
