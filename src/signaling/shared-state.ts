/**
 * The state that instances share for signaling entry and brute-force protection: the signaling
 * store and the rate limiter. With `[redis] url` both live in Redis (one connection, shared; the
 * signaling bus opens its own subscriber connections with `redis.duplicate()`), otherwise in
 * this process, which is correct for a single instance only.
 */
import { Redis } from 'ioredis';
import type { Config } from '../config/schema.js';
import type { Clock } from '../domain/clock.js';
import { createLocalRateLimiter } from '../domain/rate-limit/local-rate-limiter.js';
import { rateLimitPolicy, type RateLimiter } from '../domain/rate-limit/rate-limiter.js';
import { createRedisRateLimiter } from '../domain/rate-limit/redis-rate-limiter.js';
import type { Logger } from '../logger.js';
import { createLocalSignalingStore } from './store/local.js';
import { createRedisSignalingStore } from './store/redis.js';
import type { SignalingStore } from './store/signaling-store.js';

export interface SharedState {
  signalingStore: SignalingStore;
  rateLimiter: RateLimiter;
  /** The Redis connection, when configured. */
  redis?: Redis;
  close(): Promise<void>;
}

export function sharedStateFromConfig(config: Config, clock: Clock, logger: Logger): SharedState {
  const policy = rateLimitPolicy(config.rate_limits);
  if (!config.redis.url) {
    const signalingStore = createLocalSignalingStore(clock);
    return { signalingStore, rateLimiter: createLocalRateLimiter(policy, clock), close: () => signalingStore.close() };
  }
  const redis = new Redis(config.redis.url, { maxRetriesPerRequest: 3 });
  // without a listener ioredis prints every reconnect failure to stderr; commands fail on their own
  redis.on('error', (err) => logger.warn({ err }, 'redis connection error'));
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
