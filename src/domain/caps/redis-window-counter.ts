/**
 * The window counter in Redis, shared by every instance: one key per counted thing, expiring with
 * its window (Redis's own expiry, so nothing is left behind), checked and counted in one script.
 */
import type { Redis } from 'ioredis';
import type { WindowCounter } from './window-counter.js';
import { luaScript } from '../../redis/lua-script.js';

const keyOf = (key: string) => `convene:caps:${key}`;

/** KEYS: the counters; ARGV[1]: the window in ms, ARGV[1 + i]: the limit of KEYS[i]. Answers {0, 0}, or {i, ms left} for a full key. */
const TAKE = luaScript(`
for i, key in ipairs(KEYS) do
  local count = tonumber(redis.call('GET', key) or '0')
  if count >= tonumber(ARGV[i + 1]) then return {i, redis.call('PTTL', key)} end
end
for _, key in ipairs(KEYS) do
  if redis.call('INCR', key) == 1 then redis.call('PEXPIRE', key, ARGV[1]) end
end
return {0, 0}`);

export function createRedisWindowCounter(redis: Redis): WindowCounter {
  return {
    async take(keys, windowMs) {
      const [full, leftMs] = (await TAKE.run(redis, keys.length, ...keys.map(({ key }) => keyOf(key)), windowMs, ...keys.map(({ limit }) => limit))) as [
        number,
        number,
      ];
      if (full === 0) return { taken: true };
      return { taken: false, key: keys[full - 1]!, retryAfterMs: Math.max(0, leftMs) };
    },
  };
}
