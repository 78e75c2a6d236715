/**
 * The Redis timer store, shared by every instance: the room's timer is one JSON string created with
 * `SET NX` (one starter wins), its ready statuses one hash. Taking the timer and recording a status
 * check the running timer's id inside a Lua script, so that of many instances racing to expire the
 * same countdown exactly one takes it, and no status is written for a timer that is already gone.
 */
import type { Redis } from 'ioredis';
import type { RunningTimer, TimerStore } from './timer-store.js';

const timerKey = (roomId: string) => `convene:signaling:room:${roomId}:timer`;
const readyKey = (roomId: string) => `convene:signaling:room:${roomId}:timer_ready`;

/** KEYS: timer, ready statuses; ARGV: timer id. Deletes both if the timer is still that one. */
const TAKE = `
local raw = redis.call('GET', KEYS[1])
if not raw or cjson.decode(raw).timer_id ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
return 1`;

/** KEYS: timer, ready statuses; ARGV: timer id, participant id, '1' or '0'. */
const SET_READY_STATUS = `
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local timer = cjson.decode(raw)
if timer.timer_id ~= ARGV[1] or timer.ready_check_enabled ~= true then return 0 end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return 1`;

export function createRedisTimerStore(redis: Redis): TimerStore {
  return {
    async create(roomId, timer) {
      return (await redis.set(timerKey(roomId), JSON.stringify(timer), 'NX')) === 'OK';
    },
    async get(roomId) {
      const raw = await redis.get(timerKey(roomId));
      return raw === null ? undefined : (JSON.parse(raw) as RunningTimer);
    },
    async take(roomId, timerId) {
      return (await redis.eval(TAKE, 2, timerKey(roomId), readyKey(roomId), timerId)) === 1;
    },
    async setReadyStatus(roomId, timerId, participantId, status) {
      const stored = await redis.eval(SET_READY_STATUS, 2, timerKey(roomId), readyKey(roomId), timerId, participantId, status ? '1' : '0');
      return stored === 1;
    },
    async readyStatuses(roomId, participantIds) {
      const statuses = new Map<string, boolean>();
      if (participantIds.length === 0) return statuses;
      const values = await redis.hmget(readyKey(roomId), ...participantIds);
      participantIds.forEach((id, i) => {
        const value = values[i];
        if (value !== null && value !== undefined) statuses.set(id, value === '1');
      });
      return statuses;
    },
    async deleteReadyStatus(roomId, participantId) {
      await redis.hdel(readyKey(roomId), participantId);
    },
    async clear(roomId) {
      await redis.del(timerKey(roomId), readyKey(roomId));
    },
  };
}
