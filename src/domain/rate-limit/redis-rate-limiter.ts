/**
 * The Redis rate limiter: failure counts shared by every instance, so a client cannot multiply its
 * guesses by spreading them over the instances behind a load balancer. A window is one counter key
 * that expires when the window ends.
 */
import type { Redis } from 'ioredis';
import { limitOf, tooManyAttempts, type AttemptKey, type RateLimiter, type RateLimitPolicy } from './rate-limiter.js';

const KEY_PREFIX = 'convene:rl:';

/** Count one failure; the first failure of a window starts the window (atomic, so no counter outlives it). */
const RECORD_FAILURE = `
local failures = redis.call('INCR', KEYS[1])
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return failures`;

export function createRedisRateLimiter(redis: Redis, policy: RateLimitPolicy): RateLimiter {
  const windowMs = policy.windowSeconds * 1000;
  return {
    async check(keys: readonly AttemptKey[]) {
      const pipeline = redis.pipeline();
      for (const { key } of keys) pipeline.get(KEY_PREFIX + key).pttl(KEY_PREFIX + key);
      const replies = (await pipeline.exec()) ?? [];
      keys.forEach(({ scope }, i) => {
        const [countError, count] = replies[2 * i] ?? [];
        const [ttlError, ttlMs] = replies[2 * i + 1] ?? [];
        if (countError) throw countError;
        if (ttlError) throw ttlError;
        if (Number(count ?? 0) >= limitOf(policy, scope)) throw tooManyAttempts(Number(ttlMs));
      });
    },
    async recordFailure(keys: readonly AttemptKey[]) {
      await Promise.all(keys.map(({ key }) => redis.eval(RECORD_FAILURE, 1, KEY_PREFIX + key, windowMs)));
    },
    async reset(keys: readonly AttemptKey[]) {
      if (keys.length > 0) await redis.del(...keys.map(({ key }) => KEY_PREFIX + key));
    },
  };
}
