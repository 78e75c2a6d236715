/**
 * Lets unit tests run the same expiry cases on Redis as on the in-process implementations, which
 * take a fake clock: instead of sleeping, `advance` shortens the remaining lifetime of every key a
 * test created (all carry the test run's tag) by the given time, deleting those that reach zero.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll } from 'vitest';

export const redisUrl = process.env.REDIS_URL || undefined;

/** A tag unique to this test run, put into every key so that parallel runs never meet. */
export const runTag = () => `T${randomBytes(6).toString('hex')}`;

export function connectTestRedis(): Redis {
  if (!redisUrl) throw new Error('REDIS_URL is not set');
  return new Redis(redisUrl);
}

/** Registers an afterAll that disconnects every client the answered `connect` made in the file. */
export function useTestRedis(): () => Redis {
  const clients: Redis[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((r) => r.quit()));
  });
  return () => {
    const client = connectTestRedis();
    clients.push(client);
    return client;
  };
}

/** Moves Redis time forward by `ms` for the keys matching `pattern` (which must name the run's tag). */
export async function advanceRedisKeys(redis: Redis, pattern: string, ms: number): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const remaining = await redis.pttl(key);
      if (remaining < 0) continue; // no expiry (or gone): time does not touch it
      if (remaining <= ms) await redis.del(key);
      else await redis.pexpire(key, remaining - ms);
    }
  } while (cursor !== '0');
}
