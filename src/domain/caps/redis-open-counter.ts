/**
 * The open counter in Redis, counted across instances: each key is a hash of instance id → what that
 * instance holds open, so what a killed instance held can be told apart and dropped. Before each
 * acquire the hosts named in the keys are judged with the instance-liveness mechanism
 * (src/signaling/instance-liveness.ts: a host whose liveness key is gone is dead), and the dead
 * ones' counts are removed in the same script that checks and counts. A key also expires
 * `KEY_LIFETIME_MS` after its last change, so a key nobody touches again leaves nothing for good.
 */
import type { Redis } from 'ioredis';
import { once, type OpenCounter } from './open-counter.js';

const keyOf = (key: string) => `convene:caps:${key}`;
/** A day: far longer than a crashed instance's counts live (the next acquire on the key drops them). */
const KEY_LIFETIME_MS = 24 * 60 * 60 * 1000;

/**
 * KEYS: the counters; ARGV[1]: this instance, ARGV[2]: the keys' lifetime, ARGV[2 + i]: the limit of
 * KEYS[i], then the dead instances. Answers 0, or i for a full KEYS[i].
 */
const ACQUIRE = `
local n = #KEYS
for i, key in ipairs(KEYS) do
  for j = n + 3, #ARGV do redis.call('HDEL', key, ARGV[j]) end
  local open = 0
  for _, count in ipairs(redis.call('HVALS', key)) do open = open + tonumber(count) end
  if open >= tonumber(ARGV[i + 2]) then return i end
end
for _, key in ipairs(KEYS) do
  redis.call('HINCRBY', key, ARGV[1], 1)
  redis.call('PEXPIRE', key, ARGV[2])
end
return 0`;

/** KEYS: the counters; ARGV[1]: this instance, ARGV[2]: the keys' lifetime. A count that reaches 0 is removed. */
const RELEASE = `
for _, key in ipairs(KEYS) do
  if redis.call('HINCRBY', key, ARGV[1], -1) <= 0 then redis.call('HDEL', key, ARGV[1]) end
  if redis.call('EXISTS', key) == 1 then redis.call('PEXPIRE', key, ARGV[2]) end
end
return 0`;

export interface InstanceJudge {
  /** This instance's id, the field its counts are kept under. */
  readonly id: string;
  /** Resolves once this instance's liveness key exists (before a count names it). */
  registered(): Promise<void>;
  /** Of these instance ids, those that are dead. */
  gone(instanceIds: Iterable<string>): Promise<Set<string>>;
}

export function createRedisOpenCounter(redis: Redis, instance: InstanceJudge): OpenCounter {
  return {
    async acquire(keys) {
      await instance.registered();
      const redisKeys = keys.map(({ key }) => keyOf(key));
      const hosts = (await Promise.all(redisKeys.map((key) => redis.hkeys(key)))).flat();
      const dead = await instance.gone(hosts);
      const full = (await redis.eval(
        ACQUIRE,
        redisKeys.length,
        ...redisKeys,
        instance.id,
        KEY_LIFETIME_MS,
        ...keys.map(({ limit }) => limit),
        ...dead,
      )) as number;
      if (full !== 0) return { acquired: false, key: keys[full - 1]! };
      return {
        acquired: true,
        release: once(async () => {
          await redis.eval(RELEASE, redisKeys.length, ...redisKeys, instance.id, KEY_LIFETIME_MS);
        }),
      };
    },
  };
}
