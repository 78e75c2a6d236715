/**
 * The open counter in Redis, counted across instances: each key is a hash of instance id → what that
 * instance holds open, so what a killed instance held can be told apart and dropped. An acquire
 * first counts every instance's holdings, a dead one's too: a place found so is a place among the
 * living, and the common case costs one script. Only an acquire that would exceed a cap has the
 * hosts named in its keys judged with the instance-liveness mechanism
 * (src/redis/instance-liveness.ts: a host whose liveness key is gone is dead), and is asked again
 * with the dead ones' counts removed in the same script that checks and counts. A key also expires
 * `KEY_LIFETIME_MS` after its last change, so a key nobody touches again leaves nothing for good.
 *
 * Each instance knows what it holds (`held`) and writes that number into its own field, never an
 * increment: a write is idempotent, so one that failed (Redis away as a socket closed, or an answer
 * that timed out after Redis carried it out) is simply written again before the next acquire, and
 * no place stays taken, nor is one given back twice, while the instance lives.
 */
import type { Redis } from 'ioredis';
import { once, type OpenCounter } from './open-counter.js';
import { luaScript } from '../../redis/lua-script.js';

const keyOf = (key: string) => `convene:caps:${key}`;
/** A day: far longer than a crashed instance's counts live (the next acquire on the key drops them). */
const KEY_LIFETIME_MS = 24 * 60 * 60 * 1000;

/**
 * KEYS: the counters (n); ARGV[1]: this instance, ARGV[2]: the keys' lifetime, ARGV[2 + i]: the limit
 * of KEYS[i], ARGV[2 + n + i]: what this instance would hold under KEYS[i] with the new one, then the
 * dead instances. Answers 0 (and writes the new counts), or i for a KEYS[i] the new one would exceed.
 */
const ACQUIRE = luaScript(`
local n = #KEYS
for i, key in ipairs(KEYS) do
  for j = 2 * n + 3, #ARGV do redis.call('HDEL', key, ARGV[j]) end
  local others = 0
  local fields = redis.call('HGETALL', key)
  for f = 1, #fields, 2 do
    if fields[f] ~= ARGV[1] then others = others + tonumber(fields[f + 1]) end
  end
  if others + tonumber(ARGV[2 + n + i]) > tonumber(ARGV[2 + i]) then return i end
end
for i, key in ipairs(KEYS) do
  redis.call('HSET', key, ARGV[1], ARGV[2 + n + i])
  redis.call('PEXPIRE', key, ARGV[2])
end
return 0`);

/** KEYS: the counters; ARGV[1]: this instance, ARGV[2]: the keys' lifetime, ARGV[2 + i]: what it holds under KEYS[i] (0: the field goes). */
const WRITE = luaScript(`
for i, key in ipairs(KEYS) do
  local count = tonumber(ARGV[2 + i])
  if count > 0 then redis.call('HSET', key, ARGV[1], count) else redis.call('HDEL', key, ARGV[1]) end
  if redis.call('EXISTS', key) == 1 then redis.call('PEXPIRE', key, ARGV[2]) end
end
return 0`);

export interface InstanceJudge {
  /** This instance's id, the field its counts are kept under. */
  readonly id: string;
  /** Resolves once this instance's liveness key exists (before a count names it). */
  registered(): Promise<void>;
  /** Of these instance ids, those that are dead. */
  gone(instanceIds: Iterable<string>): Promise<Set<string>>;
}

export function createRedisOpenCounter(redis: Redis, instance: InstanceJudge): OpenCounter {
  /** What this instance holds open under each Redis key (an entry only while it holds some). */
  const held = new Map<string, number>();
  /** Keys whose last write failed: written again before the next acquire. */
  const unwritten = new Set<string>();
  const heldUnder = (key: string) => held.get(key) ?? 0;
  const add = (keys: readonly string[], delta: number) => {
    for (const key of keys) {
      const count = heldUnder(key) + delta;
      if (count > 0) held.set(key, count);
      else held.delete(key);
    }
  };

  async function write(keys: readonly string[]): Promise<void> {
    try {
      await WRITE.run(redis, keys.length, ...keys, instance.id, KEY_LIFETIME_MS, ...keys.map(heldUnder));
      for (const key of keys) unwritten.delete(key);
    } catch (err) {
      for (const key of keys) unwritten.add(key);
      throw err;
    }
  }

  return {
    async acquire(keys) {
      if (unwritten.size > 0) await write([...unwritten]).catch(() => undefined);
      await instance.registered();
      const redisKeys = keys.map(({ key }) => keyOf(key));
      const take = async (dead: Iterable<string>) =>
        (await ACQUIRE.run(
          redis,
          redisKeys.length,
          ...redisKeys,
          instance.id,
          KEY_LIFETIME_MS,
          ...keys.map(({ limit }) => limit),
          ...redisKeys.map(heldUnder),
          ...dead,
        )) as number;
      // counted here before Redis is asked, so that a write for another socket meanwhile includes this one
      add(redisKeys, 1);
      let full: number;
      try {
        full = await take([]);
        if (full !== 0) {
          const dead = await instance.gone((await Promise.all(redisKeys.map((key) => redis.hkeys(key)))).flat());
          if (dead.size > 0) full = await take(dead);
        }
      } catch (err) {
        add(redisKeys, -1);
        for (const key of redisKeys) unwritten.add(key); // Redis may have written the count before failing to answer
        throw err;
      }
      if (full !== 0) {
        add(redisKeys, -1);
        return { acquired: false, key: keys[full - 1]! };
      }
      return {
        acquired: true,
        release: once(async () => {
          add(redisKeys, -1);
          await write(redisKeys);
        }),
      };
    },
  };
}
