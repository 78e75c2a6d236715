/**
 * The Redis timer store, shared by every instance: the room's timer is one string (its id, its ready
 * check and its JSON) created with `SET NX` (one starter wins), its ready statuses one hash. Taking
 * the timer and recording a status check the running timer's id inside a Lua script, so that of many
 * instances racing to expire the same countdown exactly one takes it, and no status is written for a
 * timer that is already gone.
 *
 * The `take` that ends a timer deletes both keys. Should every instance with participants in the
 * room crash, nobody takes it: both keys then expire on their own, a countdown's an hour after its
 * end (the instances expire it at its end, retrying for a minute or so), a stopwatch's a week
 * after its start (it has no end; no meeting runs that long, and a timer whose creator is gone
 * must not outlive the room's memory for ever).
 */
import type { Redis } from 'ioredis';
import type { RunningTimer, TimerStore } from './timer-store.js';
import { luaScript } from '../../../redis/lua-script.js';

const timerKey = (roomId: string) => `convene:signaling:room:${roomId}:timer`;
const readyKey = (roomId: string) => `convene:signaling:room:${roomId}:timer_ready`;

/** How long a countdown's keys outlive its end. */
export const COUNTDOWN_KEY_GRACE_MS = 60 * 60 * 1000;
/** How long a stopwatch's keys live. */
export const STOPWATCH_KEY_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * The stored value: `<timer id> <1 or 0, the ready check> <the timer as JSON>`. The scripts read
 * the head only: Redis's cjson refuses JSON's escape of an unpaired surrogate (`"\udfff"`), which
 * JSON.stringify writes for a title holding one, and a timer the scripts could not read once could
 * be neither stopped nor expired, nor answered a ready status.
 */
const encode = (timer: RunningTimer) => `${timer.timer_id} ${timer.ready_check_enabled ? 1 : 0} ${JSON.stringify(timer)}`;
const decode = (raw: string) => JSON.parse(raw.slice(raw.indexOf(' {') + 1)) as RunningTimer;

/** KEYS: timer, ready statuses; ARGV: timer id. Deletes both if the timer is still that one. */
const TAKE = luaScript(`
local raw = redis.call('GET', KEYS[1])
if not raw or string.match(raw, '^(%S+) ') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
return 1`);

/** KEYS: timer, ready statuses; ARGV: timer id, participant id, '1' or '0'. The statuses expire with the timer. */
const SET_READY_STATUS = luaScript(`
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local id, ready_check = string.match(raw, '^(%S+) (%d) ')
if id ~= ARGV[1] or ready_check ~= '1' then return 0 end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
return 1`);

/** How long the timer's keys live unless a take deletes them first. */
function keyLifetimeMs(timer: RunningTimer): number {
  if (timer.ends_at === undefined) return STOPWATCH_KEY_TTL_MS;
  return Date.parse(timer.ends_at) - Date.parse(timer.started_at) + COUNTDOWN_KEY_GRACE_MS;
}

export function createRedisTimerStore(redis: Redis): TimerStore {
  return {
    async create(roomId, timer) {
      return (await redis.set(timerKey(roomId), encode(timer), 'PX', keyLifetimeMs(timer), 'NX')) === 'OK';
    },
    async get(roomId) {
      const raw = await redis.get(timerKey(roomId));
      return raw === null ? undefined : decode(raw);
    },
    async take(roomId, timerId) {
      return (await TAKE.run(redis, 2, timerKey(roomId), readyKey(roomId), timerId)) === 1;
    },
    async setReadyStatus(roomId, timerId, participantId, status) {
      const stored = await SET_READY_STATUS.run(redis, 2, timerKey(roomId), readyKey(roomId), timerId, participantId, status ? '1' : '0');
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
  };
}
