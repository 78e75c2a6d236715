/**
 * The Redis room settings store: `convene:signaling:room:<roomId>:settings`, a hash holding only
 * the switches away from their defaults (`raise_hands_disabled`; `waiting_room`: `1` on, `0` off),
 * so a room with none has no key. Switching the waiting room is a Lua script that answers the
 * switch it replaced. The hash lives as long as the room's member records past its last write
 * (ROOM_RECORDS_TTL_MS): it is forgotten when the room empties, and a room whose every instance
 * died and that nobody joins again must not keep it, or hand its switches to a session years on.
 */
import type { Redis } from 'ioredis';
import { ROOM_RECORDS_TTL_MS } from './membership.redis.js';
import type { RoomSettingsStore } from './room-settings-store.js';
import { luaScript } from '../../redis/lua-script.js';

const settingsKey = (roomId: string) => `convene:signaling:room:${roomId}:settings`;
const RAISE_HANDS_DISABLED = 'raise_hands_disabled';
const WAITING_ROOM = 'waiting_room';

/** KEYS: settings; ARGV: field, value, ttl. Returns the field's value before (nil when unset). */
const SWAP = luaScript(`
local previous = redis.call('HGET', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return previous`);

const switchOf = (value: string | null): boolean | undefined => (value === null ? undefined : value === '1');

export function createRedisRoomSettingsStore(redis: Redis): RoomSettingsStore {
  return {
    async read(roomId) {
      const [raiseHandsDisabled, waitingRoom] = await redis.hmget(settingsKey(roomId), RAISE_HANDS_DISABLED, WAITING_ROOM);
      const waitingRoomSwitch = switchOf(waitingRoom ?? null);
      return { raiseHandsEnabled: raiseHandsDisabled === null, ...(waitingRoomSwitch === undefined ? {} : { waitingRoom: waitingRoomSwitch }) };
    },
    async setRaiseHandsEnabled(roomId, enabled) {
      if (enabled) await redis.hdel(settingsKey(roomId), RAISE_HANDS_DISABLED);
      else await redis.multi().hset(settingsKey(roomId), RAISE_HANDS_DISABLED, '1').pexpire(settingsKey(roomId), ROOM_RECORDS_TTL_MS).exec();
    },
    async setWaitingRoom(roomId, on) {
      const previous = (await SWAP.run(redis, 1, settingsKey(roomId), WAITING_ROOM, on ? '1' : '0', ROOM_RECORDS_TTL_MS)) as string | null;
      return switchOf(previous);
    },
    async forget(roomId) {
      await redis.del(settingsKey(roomId));
    },
  };
}
