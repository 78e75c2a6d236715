/**
 * A socket's place under the open-socket caps (src/domain/caps/redis-open-counter.ts) is given back
 * exactly once, whatever Redis does as the socket closes: a release Redis never got (the connection
 * was down) is written again before the next opening, so a user is not held at the cap by sockets
 * long closed while the instance lives on; and a release whose answer timed out although Redis
 * carried it out (frozen with SIGSTOP, then thawed) is not counted twice. A private Redis.
 */
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisOpenCounter } from '../../src/domain/caps/redis-open-counter.js';
import { startInstanceLiveness, type InstanceLiveness } from '../../src/redis/instance-liveness.js';
import { privateRedisUnavailable, startPrivateRedis, type PrivateRedis } from '../support/private-redis.js';

const unavailable = privateRedisUnavailable();

describe.skipIf(unavailable)('the open-socket count when a release fails', () => {
  let server: PrivateRedis;
  let redis: Redis;
  let liveness: InstanceLiveness;
  beforeAll(async () => {
    server = await startPrivateRedis();
    // without an offline queue a command sent while disconnected fails at once, never reaching Redis
    redis = new Redis(server.url, { commandTimeout: 300, maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true });
    await redis.connect();
    liveness = startInstanceLiveness(redis, { ttlMs: 10_000, refreshMs: 5_000 }, pino({ level: 'silent' }));
    await liveness.registered();
  });
  afterAll(async () => {
    server?.thaw();
    await liveness?.close();
    redis?.disconnect();
    await server?.destroy();
  });

  const stored = (key: string) => redis.hgetall(`convene:caps:${key}`);

  it('writes a release Redis never got before the next opening', async () => {
    const counter = createRedisOpenCounter(redis, liveness);
    const keys = [{ key: 'sockets:user:lost-release', limit: 1 }];
    const first = await counter.acquire(keys);
    expect((await counter.acquire(keys)).acquired).toBe(false); // at the cap

    const ended = new Promise((resolve) => redis.once('end', resolve));
    redis.disconnect();
    await expect(first.acquired && first.release()).rejects.toThrow();
    await ended;
    await redis.connect();
    expect(await stored(keys[0]!.key)).toEqual({ [liveness.id]: '1' }); // Redis never heard of it

    expect((await counter.acquire(keys)).acquired).toBe(true);
    expect(await stored(keys[0]!.key)).toEqual({ [liveness.id]: '1' });
  });

  it('gives a place back once when Redis carried out a release whose answer timed out', async () => {
    const counter = createRedisOpenCounter(redis, liveness);
    const keys = [{ key: 'sockets:user:late-release', limit: 2 }];
    const first = await counter.acquire(keys);
    expect((await counter.acquire(keys)).acquired).toBe(true);

    server.freeze();
    await expect(first.acquired && first.release()).rejects.toThrow(); // Redis does it on thawing
    server.thaw();

    expect((await counter.acquire(keys)).acquired).toBe(true); // two open again
    expect((await counter.acquire(keys)).acquired).toBe(false);
    expect(await stored(keys[0]!.key)).toEqual({ [liveness.id]: '2' });
  });
});
