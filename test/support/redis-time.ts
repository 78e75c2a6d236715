/**
 * Lets unit tests run the same expiry cases on Redis as on the in-process implementations, which
 * take a fake clock: instead of sleeping, `advance` shortens the remaining lifetime of every key a
 * test created (all carry the test run's tag) by the given time, deleting those that reach zero.
 * `clockedSubjects` builds both subjects of such a contract test.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll } from 'vitest';

const redisUrl = process.env.REDIS_URL || undefined;

/** A tag unique to this test run, put into every key so that parallel runs never meet. */
export const runTag = () => `T${randomBytes(6).toString('hex')}`;

function connectTestRedis(): Redis {
  if (!redisUrl) throw new Error('REDIS_URL is not set');
  return new Redis(redisUrl);
}

/** Registers an afterAll that disconnects every client the answered `connect` made in the file. */
function useTestRedis(): () => Redis {
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
async function advanceRedisKeys(redis: Redis, pattern: string, ms: number): Promise<void> {
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

/** One implementation under a contract test, with a clock the test moves. */
export interface ClockedSubject<T> {
  /** Instances over the same state: two on Redis (two service instances), one in process. */
  instances: T[];
  advance(ms: number): Promise<void>;
  /** How close to an expiry instant the subject can be checked: 1 ms with a fake clock; Redis's own clock keeps running meanwhile. */
  edgeMs: number;
}

/**
 * The subjects of a contract test, for `describe.each`: the in-process implementation on a fake
 * clock and, when REDIS_URL is set, two Redis instances whose keys match `redisKeys` (a pattern
 * naming the run's tag). Call at the top level of the test file (it registers an afterAll).
 */
export function clockedSubjects<T>(
  what: string,
  make: { local(clock: () => number): T; redis(client: Redis): T; redisKeys: string },
): [string, () => ClockedSubject<T>][] {
  const subjects: [string, () => ClockedSubject<T>][] = [
    [
      'local',
      () => {
        let now = 1_700_000_000_000;
        return { instances: [make.local(() => now)], advance: async (ms) => void (now += ms), edgeMs: 1 };
      },
    ],
  ];
  if (!redisUrl) {
    console.log(`REDIS_URL is not set: the Redis ${what} is not tested in this run`);
    return subjects;
  }
  const connect = useTestRedis();
  subjects.push([
    'redis',
    () => {
      const [a, b] = [connect(), connect()];
      return { instances: [make.redis(a), make.redis(b)], advance: (ms) => advanceRedisKeys(a, make.redisKeys, ms), edgeMs: 1_000 };
    },
  ]);
  return subjects;
}
