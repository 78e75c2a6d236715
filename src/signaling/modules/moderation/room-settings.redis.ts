/**
 * The Redis room settings store: `convene:signaling:room:<roomId>:settings`, a hash holding only
 * the switches away from their defaults (`raise_hands_disabled`, `waiting_room_forced`), so a room
 * with none has no key. The hash lives as long as the room's member records past its last write
 * (ROOM_RECORDS_TTL_MS): it is forgotten when the room empties, and a room whose every instance
 * died and that nobody joins again must not keep it, or hand its switches to a session years on.
 */
import type { Redis } from 'ioredis';
import { ROOM_RECORDS_TTL_MS } from '../control/membership.redis.js';
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
      else await redis.multi().hset(settingsKey(roomId), RAISE_HANDS_DISABLED, '1').pexpire(settingsKey(roomId), ROOM_RECORDS_TTL_MS).exec();
    },
    async forceWaitingRoom(roomId) {
      const replies = await redis.multi().hsetnx(settingsKey(roomId), WAITING_ROOM_FORCED, '1').pexpire(settingsKey(roomId), ROOM_RECORDS_TTL_MS).exec();
      const [error, set] = replies?.[0] ?? [new Error('the transaction was discarded'), 0];
      if (error) throw error;
      return set === 1;
    },
    async forget(roomId) {
      await redis.del(settingsKey(roomId));
    },
  };
}
