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
import type { SignalingStore } from '../domain/tickets/signaling-store.js';

export interface SharedState {
  signalingStore: SignalingStore;
  rateLimiter: RateLimiter;
  /** The Redis connection, when configured. */
  redis?: Redis;
  close(): Promise<void>;
}

/** ioredis's messages for a command that could not reach Redis (as opposed to one Redis refused). */
const REDIS_UNREACHABLE = /^(Reached the max retries per request limit|Connection is closed\.|Command aborted due to connection close|Stream isn't writeable|Command timed out)/;

/**
 * Whether an error means "Redis cannot be reached" (answer 503 and let the client retry), as
 * `isDatabaseDown` does for the database. While Redis is away ioredis keeps each command in its
 * offline queue and fails it with a MaxRetriesPerRequestError after `maxRetriesPerRequest`
 * reconnection attempts; a command cut off mid-pipeline fails with an AbortError.
 */
export function isRedisDown(err: unknown, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > 5) return false;
  const { name, message, cause } = err as { name?: unknown; message?: unknown; cause?: unknown };
  if (name === 'MaxRetriesPerRequestError' || (typeof message === 'string' && REDIS_UNREACHABLE.test(message))) return true;
  return isRedisDown(cause, depth + 1);
}

/** `onRedisError` hears of each error of the Redis connection (for the metrics). */
export function sharedStateFromConfig(config: Config, clock: Clock, logger: Logger, onRedisError?: () => void): SharedState {
  const policy = rateLimitPolicy(config.rate_limits);
  if (!config.redis.url) {
    const signalingStore = createLocalSignalingStore(clock);
    return { signalingStore, rateLimiter: createLocalRateLimiter(policy, clock), close: () => signalingStore.close() };
  }
  // A command waiting for Redis fails (503) after `maxRetriesPerRequest` reconnection attempts.
  // ioredis's own backoff grows to 5 s between attempts, so requests waited 6 s and more for their
  // 503 (test/faults/redis-restart.test.ts), and up to 20 s in a long outage; with at most 0.5 s
  // between attempts the 503 comes within about 2 s, and Redis is found again within 0.5 s of its
  // return. The bus's subscriber connection (`redis.duplicate()`) inherits both.
  // A Redis that hangs with the connection open (frozen, partitioned) fails each command after
  // `command_timeout_ms` (503) instead of holding the request for good.
  const redis = new Redis(config.redis.url, {
    maxRetriesPerRequest: 3,
    retryStrategy: (times) => Math.min(50 * 2 ** (times - 1), 500),
    commandTimeout: config.redis.command_timeout_ms,
  });
  // without a listener ioredis prints every reconnect failure to stderr; commands fail on their own
  redis.on('error', (err) => {
    onRedisError?.();
    logger.warn({ err }, 'redis connection error');
  });
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
