/**
 * The rate limiter's contract, run against the in-process limiter (fake clock) and, when REDIS_URL
 * is set, the Redis limiter (two instances sharing counts; time moved by shortening key lifetimes).
 */
import { describe, expect, it } from 'vitest';

import { createLocalRateLimiter } from '../../../src/domain/rate-limit/local-rate-limiter.js';
import { attemptKeys, guardAttempt, type RateLimiter, type RateLimitPolicy } from '../../../src/domain/rate-limit/rate-limiter.js';
import { createRedisRateLimiter } from '../../../src/domain/rate-limit/redis-rate-limiter.js';
import { DomainError } from '../../../src/errors.js';
import { httpError, type HttpError } from '../../../src/http/errors.js';
import { clockedSubjects, runTag } from '../../support/redis-time.js';
import { asHttp } from '../../support/http-errors.js';

const policy: RateLimitPolicy = { windowSeconds: 300, failuresPerSource: 3, failuresPerTarget: 5 };

const tag = runTag();
let counter = 0;
/** Keys of a fresh source and target, unique to the run. */
const freshKeys = (kind = 'pw') => attemptKeys(kind, `${tag}-src-${++counter}`, `${tag}-room-${counter}`);

const subjects = clockedSubjects('rate limiter', {
  local: (clock) => createLocalRateLimiter(policy, clock),
  redis: (client) => createRedisRateLimiter(client, policy),
  redisKeys: `convene:rl:*${tag}*`,
});

/** The 429 a reservation throws, or undefined when it lets the attempt through (which then ends, uncounted). */
async function refusal(limiter: RateLimiter, keys: ReturnType<typeof attemptKeys>): Promise<HttpError | undefined> {
  try {
    await limiter.reserve(keys);
    await limiter.release(keys, false);
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    return httpError(err as DomainError);
  }
}

async function fail(limiters: RateLimiter[], keys: ReturnType<typeof attemptKeys>, times: number) {
  // alternate instances: counts are shared, wherever a failure happened
  for (let i = 0; i < times; i++) {
    const limiter = limiters[i % limiters.length]!;
    await limiter.reserve(keys);
    await limiter.release(keys, true);
  }
}

describe.each(subjects)('%s rate limiter', (_name, make) => {
  const subject = make();
  const limiter = subject.instances.at(-1)!;

  it('lets a source make its last allowed attempt, and refuses the next with 429 and Retry-After', async () => {
    const keys = freshKeys();
    await fail(subject.instances, keys, policy.failuresPerSource - 1);
    expect(await refusal(limiter, keys)).toBeUndefined();
    await fail(subject.instances, keys, 1);
    const refused = await refusal(limiter, keys);
    expect(refused?.status).toBe(429);
    expect(refused?.code).toBe('too_many_requests');
    expect(Number(refused?.headers?.['retry-after'])).toBeGreaterThanOrEqual(299);
    expect(Number(refused?.headers?.['retry-after'])).toBeLessThanOrEqual(300);
  });

  it('limits a target over many sources at its own limit', async () => {
    const target = `${tag}-target-${++counter}`;
    const sourceOf = (i: number) => attemptKeys('pw', `${tag}-many-${counter}-${i}`, target);
    for (let i = 0; i < policy.failuresPerTarget - 1; i++) await fail(subject.instances, sourceOf(i), 1);
    expect(await refusal(limiter, sourceOf(100))).toBeUndefined();
    await fail(subject.instances, sourceOf(policy.failuresPerTarget), 1);
    expect((await refusal(limiter, sourceOf(101)))?.status).toBe(429);
  });

  it('counts keys apart: other sources, targets and kinds are unaffected', async () => {
    const keys = freshKeys();
    await fail(subject.instances, keys, policy.failuresPerSource);
    expect(await refusal(limiter, freshKeys())).toBeUndefined();
    expect(await refusal(limiter, [keys[1]!])).toBeUndefined(); // the target alone is below its limit
    expect((await refusal(limiter, [keys[0]!]))?.status).toBe(429);
  });

  it('counts down Retry-After and opens again when the window ends', async () => {
    const keys = freshKeys();
    await fail(subject.instances, keys, policy.failuresPerSource);
    await subject.advance(100_000);
    const retryAfter = Number((await refusal(limiter, keys))?.headers?.['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(199);
    expect(retryAfter).toBeLessThanOrEqual(200);
    await subject.advance(200_000 - subject.edgeMs);
    expect((await refusal(limiter, keys))?.status).toBe(429);
    await subject.advance(subject.edgeMs);
    expect(await refusal(limiter, keys)).toBeUndefined();
  });

  it('starts the window at the first failure: later failures do not extend it', async () => {
    const keys = freshKeys();
    await fail(subject.instances, keys, 1);
    await subject.advance(250_000);
    await fail(subject.instances, keys, policy.failuresPerSource - 1);
    expect((await refusal(limiter, keys))?.status).toBe(429);
    await subject.advance(50_000);
    expect(await refusal(limiter, keys)).toBeUndefined();
  });

  it('forgets a key on reset', async () => {
    const keys = freshKeys();
    await fail(subject.instances, keys, policy.failuresPerSource);
    await subject.instances[0]!.reset([keys[0]!]);
    expect(await refusal(limiter, keys)).toBeUndefined();
  });

  it('guards an attempt: refuses it when over the limit, counts it only when it fails', async () => {
    const keys = freshKeys();
    for (let i = 0; i < 10; i++) expect(await guardAttempt(limiter, keys, () => true)).toBe(true);
    for (let i = 0; i < policy.failuresPerSource; i++) expect(await guardAttempt(limiter, keys, async () => false)).toBe(false);
    let ran = false;
    await expect(asHttp(guardAttempt(limiter, keys, () => (ran = true)))).rejects.toMatchObject({ status: 429 });
    expect(ran).toBe(false); // a refused attempt never reaches the secret
  });
});
