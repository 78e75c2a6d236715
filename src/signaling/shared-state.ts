/**
 * The state that instances share for signaling entry and brute-force protection: the signaling
 * store and the rate limiter. With `[redis] url` both live in Redis (one connection, opened by
 * src/redis/, shared; the signaling bus opens its own subscriber connections with
 * `redis.duplicate()`), otherwise in this process, which is correct for a single instance only.
 */
import type { Redis } from 'ioredis';
import type { Config } from '../config/schema.js';
import type { Clock } from '../domain/clock.js';
import { createLocalRateLimiter } from '../domain/rate-limit/local-rate-limiter.js';
import { rateLimitPolicy, type RateLimiter } from '../domain/rate-limit/rate-limiter.js';
import { createRedisRateLimiter } from '../domain/rate-limit/redis-rate-limiter.js';
import type { Logger } from '../logger.js';
import { connectRedis } from '../redis/redis.js';
import { createLocalSignalingStore } from './store/local.js';
import { createRedisSignalingStore } from './store/redis.js';
import type { SignalingStore } from '../domain/tickets/signaling-store.js';

export interface SharedState {
  signalingStore: SignalingStore;
  rateLimiter: RateLimiter;
  /** The Redis connection, when configured. */
  redis?: Redis;
  close(): Promise<void>;
}

/** `onRedisError` hears of each error of the Redis connection (for the metrics). */
export function sharedStateFromConfig(config: Config, clock: Clock, logger: Logger, onRedisError?: () => void): SharedState {
  const policy = rateLimitPolicy(config.rate_limits);
  if (!config.redis.url) {
    const signalingStore = createLocalSignalingStore(clock);
    return { signalingStore, rateLimiter: createLocalRateLimiter(policy, clock), close: () => signalingStore.close() };
  }
  const redis = connectRedis(config.redis.url, config.redis, logger, onRedisError);
  const signalingStore = createRedisSignalingStore(redis);
  return {
    signalingStore,
    rateLimiter: createRedisRateLimiter(redis, policy),
    redis,
    async close() {
      await signalingStore.close();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
