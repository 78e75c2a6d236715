/**
 * The Redis rate limiter: failure counts shared by every instance, so a client cannot multiply its
 * guesses by spreading them over the instances behind a load balancer. A window is one counter key
 * that expires when the window ends; beside it, a counter of the attempts in flight.
 */
import type { Redis } from 'ioredis';
import { attemptsInFlight, limitOf, tooManyAttempts, type AttemptKey, type RateLimiter, type RateLimitPolicy } from './rate-limiter.js';
import { luaScript } from '../../redis/lua-script.js';

const KEY_PREFIX = 'convene:rl:';
/** Beside each failures counter, the attempts in flight on it (see `reserve`). */
const IN_FLIGHT_PREFIX = 'convene:rl:inflight:';

/**
 * How long an attempt may stay in flight: longer than any attempt takes (a database lookup, with its
 * timeouts). It bounds what an instance that dies mid-attempt leaves behind; renewed by every
 * reservation, so a key with attempts in flight never loses them to expiry.
 */
const IN_FLIGHT_MS = 60_000;

/**
 * KEYS: pairs of (failures counter, in-flight counter) per attempt key; ARGV[1]: the window and
 * ARGV[2] the in-flight lifetime in ms, ARGV[2 + i]: the limit of the i-th pair. Answers -1 when
 * the attempt is now in flight; otherwise, having changed nothing, the ms until the last used-up
 * window ends (0 when only attempts in flight fill a key). One script, because a GET and an INCR
 * sent apart let every concurrent attempt (on this instance or another) read the count before any
 * of them raises it.
 */
const RESERVE = luaScript(`
local waitMs = -1
for i = 1, #KEYS / 2 do
  local failures = tonumber(redis.call('GET', KEYS[2 * i - 1]) or '0')
  local limit = tonumber(ARGV[2 + i])
  if failures >= limit then
    local ttl = redis.call('PTTL', KEYS[2 * i - 1])
    if ttl < 0 then ttl = tonumber(ARGV[1]) end
    if ttl > waitMs then waitMs = ttl end
  elseif failures + tonumber(redis.call('GET', KEYS[2 * i]) or '0') >= limit and waitMs < 0 then
    waitMs = 0
  end
end
if waitMs >= 0 then return waitMs end
for i = 1, #KEYS / 2 do
  redis.call('INCR', KEYS[2 * i])
  redis.call('PEXPIRE', KEYS[2 * i], ARGV[2])
end
return -1`);

/**
 * KEYS as for RESERVE; ARGV[1]: the window in ms, ARGV[2]: '1' to count a failure. The first failure
 * of a window starts it (atomic, so no counter outlives its window).
 */
const RELEASE = luaScript(`
for i = 1, #KEYS / 2 do
  if redis.call('DECR', KEYS[2 * i]) <= 0 then redis.call('DEL', KEYS[2 * i]) end
  if ARGV[2] == '1' then
    redis.call('INCR', KEYS[2 * i - 1])
    if redis.call('PTTL', KEYS[2 * i - 1]) < 0 then redis.call('PEXPIRE', KEYS[2 * i - 1], ARGV[1]) end
  end
end
return 0`);

export function createRedisRateLimiter(redis: Redis, policy: RateLimitPolicy): RateLimiter {
  const windowMs = policy.windowSeconds * 1000;
  const redisKeys = (keys: readonly AttemptKey[]) => keys.map(({ key }) => KEY_PREFIX + key);
  /** The failures counter and the in-flight counter of each key, in the scripts' order. */
  const pairs = (keys: readonly AttemptKey[]) => keys.flatMap(({ key }) => [KEY_PREFIX + key, IN_FLIGHT_PREFIX + key]);
  return {
    async reserve(keys) {
      if (keys.length === 0) return;
      const limits = keys.map(({ scope }) => limitOf(policy, scope));
      const waitMs = Number(await RESERVE.run(redis, 2 * keys.length, ...pairs(keys), windowMs, IN_FLIGHT_MS, ...limits));
      if (waitMs === 0) throw attemptsInFlight();
      if (waitMs >= 0) throw tooManyAttempts(waitMs);
    },
    async release(keys, failed) {
      if (keys.length > 0) await RELEASE.run(redis, 2 * keys.length, ...pairs(keys), windowMs, failed ? '1' : '0');
    },
    async reset(keys) {
      if (keys.length > 0) await redis.del(...redisKeys(keys));
    },
  };
}
