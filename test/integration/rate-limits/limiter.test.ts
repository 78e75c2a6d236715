/**
 * The rate limiter under concurrency, below HTTP: guarded attempts fired at once never run more
 * wrong guesses than the limit, on the in-process limiter and (when REDIS_URL is set) on two Redis
 * limiters with connections of their own, as two Convene instances have. Each attempt yields to the
 * event loop before it answers, as a database lookup does, so that the attempts truly overlap.
 */
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';

import { createLocalRateLimiter } from '../../../src/domain/rate-limit/local-rate-limiter.js';
import { attemptKeys, guardAttempt, type RateLimiter, type RateLimitPolicy } from '../../../src/domain/rate-limit/rate-limiter.js';
import { createRedisRateLimiter } from '../../../src/domain/rate-limit/redis-rate-limiter.js';
import { runTag } from '../../support/redis-time.js';
import { redisUrl } from '../../support/signaling.js';
import { asHttp } from '../../support/http-errors.js';

const policy: RateLimitPolicy = { windowSeconds: 300, failuresPerSource: 5, failuresPerTarget: 20 };
const ATTEMPTS = 100;

const tag = runTag();
let counter = 0;
const fresh = (what: string) => `${tag}-${what}-${++counter}`;

const redisClients: Redis[] = [];
afterAll(async () => {
  const [client] = redisClients;
  if (client) {
    const stale = await client.keys(`convene:rl:*${tag}*`); // this run's keys only (the tag is unique)
    if (stale.length > 0) await client.del(...stale);
  }
  await Promise.all(redisClients.map((r) => r.quit()));
});

const subjects: [string, () => RateLimiter[]][] = [['local', () => [createLocalRateLimiter(policy)]]];
if (redisUrl) {
  const url = redisUrl;
  subjects.push([
    'redis (two instances)',
    () =>
      [0, 1].map(() => {
        const client = new Redis(url);
        redisClients.push(client);
        return createRedisRateLimiter(client, policy);
      }),
  ]);
} else {
  console.log('REDIS_URL is not set: the Redis rate limiter is not tested under concurrency in this run');
}

/** What a lookup of the secret costs: the event loop turns (a database answer arrives as I/O). */
const lookup = () => new Promise((resolve) => setImmediate(resolve));

interface Outcome {
  ran: number;
  refused: number;
  retryAfters: number[];
}

/** Fires `ATTEMPTS` guarded attempts at once, spread over the instances; `succeeds(i)` decides each one. */
async function fire(instances: RateLimiter[], keysOf: (i: number) => ReturnType<typeof attemptKeys>, succeeds = (_i: number) => false) {
  const outcome: Outcome = { ran: 0, refused: 0, retryAfters: [] };
  const failedRuns: number[] = [];
  await Promise.all(
    Array.from({ length: ATTEMPTS }, async (_, i) => {
      try {
        await asHttp(
          guardAttempt(instances[i % instances.length]!, keysOf(i), async () => {
            outcome.ran += 1;
            await lookup();
            if (!succeeds(i)) failedRuns.push(i);
            return succeeds(i);
          }),
        );
      } catch (err: any) {
        expect(err).toMatchObject({ status: 429, code: 'too_many_requests' });
        outcome.refused += 1;
        outcome.retryAfters.push(Number(err.headers['retry-after']));
      }
    }),
  );
  return { ...outcome, failed: failedRuns.length };
}

describe.each(subjects)('%s rate limiter under concurrency', (_name, make) => {
  const instances = make();

  it(`runs ${policy.failuresPerSource} of ${ATTEMPTS} wrong guesses from one source fired at once, and refuses the rest`, async () => {
    const keys = attemptKeys('pw', fresh('src'), fresh('room'));
    const outcome = await fire(instances, () => keys);
    expect(outcome).toMatchObject({ ran: policy.failuresPerSource, refused: ATTEMPTS - policy.failuresPerSource });
    // afterwards the source is used up until its window ends
    await expect(asHttp(guardAttempt(instances[0]!, keys, () => true))).rejects.toMatchObject({ status: 429 });
  });

  it(`runs ${policy.failuresPerTarget} of ${ATTEMPTS} wrong guesses at one target from as many sources`, async () => {
    const target = fresh('room');
    const outcome = await fire(instances, (i) => attemptKeys('pw', fresh(`src${i}`), target));
    expect(outcome).toMatchObject({ ran: policy.failuresPerTarget, refused: ATTEMPTS - policy.failuresPerTarget });
  });

  it('never runs more wrong guesses than the limit, whatever right ones run among them', async () => {
    const keys = attemptKeys('pw', fresh('src'), fresh('room'));
    const outcome = await fire(
      instances,
      () => keys,
      (i) => i % 3 === 0,
    );
    expect(outcome.failed).toBeLessThanOrEqual(policy.failuresPerSource);
    // the right ones gave their reservations back: the rest of the budget is still there
    let more = 0;
    while (
      more <= ATTEMPTS &&
      (await guardAttempt(instances[0]!, keys, () => false).then(
        () => true,
        () => false,
      ))
    )
      more += 1;
    expect(outcome.failed + more).toBe(policy.failuresPerSource);
  });

  it('serves a burst of right guesses a few at a time instead of refusing them, and refuses for the window once failures fill it', async () => {
    // guests behind one address opening one invitation at once: all get in, at most the limit at a time
    const keys = attemptKeys('pw', fresh('src'), fresh('room'));
    let running = 0;
    let most = 0;
    const burst = await Promise.all(
      Array.from({ length: ATTEMPTS }, (_, i) =>
        guardAttempt(instances[i % instances.length]!, keys, async () => {
          most = Math.max(most, ++running);
          await lookup();
          running -= 1;
          return true;
        }),
      ),
    );
    expect(burst.every((succeeded) => succeeded)).toBe(true);
    expect(most).toBeLessThanOrEqual(policy.failuresPerSource);
    const failing = await fire(instances, () => keys);
    expect(failing.ran).toBe(policy.failuresPerSource);
    const afterFailures = await asHttp(guardAttempt(instances[0]!, keys, () => true)).catch((err) => Number(err.headers['retry-after']));
    expect(afterFailures).toBeGreaterThanOrEqual(policy.windowSeconds - 5);
  });

  it('says to retry in 1 s when attempts in flight fill the budget for longer than it waits (2 s)', async () => {
    const keys = attemptKeys('pw', fresh('src'), fresh('room'));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow = Array.from({ length: policy.failuresPerSource }, () => guardAttempt(instances[0]!, keys, () => held.then(() => true)));
    const started = Date.now();
    const refusal = await asHttp(guardAttempt(instances[1 % instances.length]!, keys, () => true)).catch((err) => err);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_900);
    expect(refusal).toMatchObject({ status: 429, code: 'too_many_requests', headers: { 'retry-after': '1' } });
    release();
    expect(await Promise.all(slow)).toEqual(slow.map(() => true));
    expect(await guardAttempt(instances[0]!, keys, () => true)).toBe(true); // nothing was counted
  });

  it('does not count an attempt that throws (no secret was compared)', async () => {
    const keys = attemptKeys('pin', fresh('src'), fresh('sip'));
    const outage = new Error('database down');
    for (let i = 0; i < 2 * policy.failuresPerSource; i++) {
      await expect(guardAttempt(instances[i % instances.length]!, keys, () => Promise.reject(outage))).rejects.toBe(outage);
    }
    expect(await fire(instances, () => keys)).toMatchObject({ ran: policy.failuresPerSource });
  });
});
