/**
 * src/redis/: Redis as every part of Convene uses it, the transports and the domain's Redis adapters
 * alike: the connection that instances share state through, how a failure to reach it is
 * recognised (here), and each instance's liveness key (instance-liveness.ts). It imports nothing
 * of Convene but the configuration's type and the logger.
 */
import { Redis } from 'ioredis';
import type { Config } from '../config/schema.js';
import type { Logger } from '../logger.js';

/**
 * One connection to `url` (`[redis] url`). `onError` hears of each error of the connection (for the metrics).
 * A command waiting for Redis fails (503) after `maxRetriesPerRequest` reconnection attempts.
 * ioredis's own backoff grows to 5 s between attempts, so requests waited 6 s and more for their
 * 503 (test/faults/redis-restart.test.ts), and up to 20 s in a long outage; with at most 0.5 s
 * between attempts the 503 comes within about 2 s, and Redis is found again within 0.5 s of its
 * return. The bus's subscriber connection (`redis.duplicate()`) inherits both.
 * A Redis that hangs with the connection open (frozen, partitioned) fails each command after
 * `command_timeout_ms` (503) instead of holding the request for good.
 */
export function connectRedis(url: string, config: Config['redis'], logger: Logger, onError?: () => void): Redis {
  const redis = new Redis(url, {
    maxRetriesPerRequest: 3,
    retryStrategy: (times) => Math.min(50 * 2 ** (times - 1), 500),
    commandTimeout: config.command_timeout_ms,
  });
  // without a listener ioredis prints every reconnect failure to stderr; commands fail on their own
  redis.on('error', (err) => {
    onError?.();
    logger.warn({ err }, 'redis connection error');
  });
  return redis;
}

/** ioredis's messages for a command that could not reach Redis (as opposed to one Redis refused). */
const REDIS_UNREACHABLE =
  /^(Reached the max retries per request limit|Connection is closed\.|Command aborted due to connection close|Stream isn't writeable|Command timed out)/;

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
