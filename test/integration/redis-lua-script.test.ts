/**
 * Lua scripts run by their SHA1 (src/redis/lua-script.ts): the answer is the script's, a Redis that
 * lost its script cache (restarted, flushed) gets the text again, and a script's own error reaches
 * the caller. Needs REDIS_URL.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { luaScript } from '../../src/redis/lua-script.js';

const redisUrl = process.env.REDIS_URL || undefined;

describe.skipIf(!redisUrl)('Lua scripts by SHA1', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(redisUrl!);
  });
  afterAll(async () => {
    await redis.quit();
  });
  // a script of this test alone (a fresh text), so that no other test's run has loaded it
  const tag = randomUUID();
  const append = luaScript(`-- ${tag}\nreturn redis.call('APPEND', KEYS[1], ARGV[1])`);
  const failing = luaScript(`-- ${tag}\nreturn redis.call('INCR', KEYS[1])`);

  it('runs a script Redis has not seen, then by its SHA1 alone, and again after the script cache was flushed', async () => {
    const key = `convene:test:lua:${tag}`;
    expect(await redis.script('EXISTS', append.sha)).toEqual([0]);
    expect(await append.run(redis, 1, key, 'ab')).toBe(2);
    expect(await redis.script('EXISTS', append.sha)).toEqual([1]);
    expect(await append.run(redis, 1, key, 'cd')).toBe(4);
    await redis.script('FLUSH');
    expect(await append.run(redis, 1, key, 'ef')).toBe(6);
    expect(await redis.get(key)).toBe('abcdef');
    await redis.del(key);
  });

  it("passes a script's own error on", async () => {
    const key = `convene:test:lua:${tag}:text`;
    await redis.set(key, 'not a number');
    await expect(failing.run(redis, 1, key)).rejects.toThrow(/not an integer/);
    await redis.del(key);
  });
});
