/**
 * Two Convene instances over one database and one Redis share one budget per source and per target:
 * wrong guesses fired at once and spread over both get no more comparisons in total than the limit,
 * a source or target used up on one is refused on the other, a short window opens again on both,
 * and strangers' failures on one instance refuse no honest party's right guesses on the other.
 * Needs REDIS_URL (without it each instance counts alone, which is right for one instance only).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { freshSource, redisUrl } from '../../support/signaling.js';
import { useTestApp, type TestApp } from '../../support/test-app.js';
import {
  burst,
  createScene,
  expectTooMany,
  failuresLeft,
  failuresOf,
  guesses,
  loginPair,
  rateLimitedConfig,
  sourceBudget,
  tally,
  type Scene,
} from './guesses.js';

const limits = { window_seconds: 300, failures_per_source: 5, failures_per_target: 20 };
const AT_ONCE = 100;

if (!redisUrl) console.log('REDIS_URL is not set: the two-instance rate-limit tests need Redis and are skipped in this run');

describe.skipIf(!redisUrl)('two instances over one Redis', () => {
  const first = useTestApp(rateLimitedConfig(limits));
  let second: TestApp;
  beforeAll(async () => {
    second = await first.withConfig(rateLimitedConfig(limits));
  });
  afterAll(() => second?.close());

  let scene: Scene;
  beforeEach(async () => {
    scene = await createScene(first, ...(await loginPair(first)));
  });
  /** The instance the i-th request goes to: every other one to each. */
  const instance = (i: number) => (i % 2 === 0 ? first : second);

  describe.each(guesses)('$name', (guess) => {
    it(`compare its budget of wrong guesses in all from one source firing ${AT_ONCE} at both at once`, async () => {
      const budget = sourceBudget(guess, limits);
      const source = freshSource();
      const wrong = (i: number) => guess.wrong(instance(i), scene, source);
      const failures = failuresOf(guess, limits.window_seconds, await burst(AT_ONCE, wrong));
      expect(failures).toBeLessThanOrEqual(budget);
      if (!guess.afterAnotherGuard) expect(failures).toBe(budget);
      let n = 0;
      const left = await failuresLeft(guess, limits.window_seconds, () => wrong(n++));
      expect(failures + left).toBe(budget);
      for (const app of [first, second]) {
        expectTooMany(await guess.right(app, scene, source), guess.operationId, limits.window_seconds);
        const honest = await guess.honest(app, scene, source);
        if (guess.perSource) expectTooMany(honest, guess.operationId, limits.window_seconds);
        else expect(honest.status).toBe(guess.success);
      }
    });

    it(`compare ${limits.failures_per_target} wrong guesses in all at one target from ${AT_ONCE} sources firing at both at once, and refuse no honest party`, async () => {
      const wrong = (i: number) => guess.wrong(instance(i), scene, freshSource());
      const failures = failuresOf(guess, limits.window_seconds, await burst(AT_ONCE, wrong));
      expect(failures).toBeLessThanOrEqual(limits.failures_per_target);
      if (!guess.afterAnotherGuard) expect(failures).toBe(limits.failures_per_target);
      let n = 0;
      const left = await failuresLeft(guess, limits.window_seconds, () => wrong(n++));
      expect(failures + left).toBe(limits.failures_per_target);
      for (const app of [first, second]) {
        const right = await guess.right(app, scene, freshSource());
        if (guess.sameTarget) expectTooMany(right, guess.operationId, limits.window_seconds);
        else expect(right.status).toBe(guess.success);
        expect((await guess.honest(app, scene, freshSource())).status).toBe(guess.success);
      }
    });

    it("refuse none of honest parties' right guesses on one instance while a source fires wrong ones on the other", async () => {
      const attacker = freshSource();
      const [attack, others] = await Promise.all([
        burst(AT_ONCE / 2, () => guess.wrong(first, scene, attacker)),
        burst(10, () => guess.honest(second, scene, freshSource())),
      ]);
      expect(failuresOf(guess, limits.window_seconds, attack)).toBeLessThanOrEqual(sourceBudget(guess, limits));
      expect(tally(others)).toEqual({ [guess.success]: 10 });
    });
  });

  describe('with a short window', () => {
    const short = { window_seconds: 3, failures_per_source: 2, failures_per_target: 50 };
    let quick: [TestApp, TestApp];
    beforeAll(async () => {
      quick = [await first.withConfig(rateLimitedConfig(short)), await first.withConfig(rateLimitedConfig(short))];
    });
    afterAll(async () => {
      await Promise.all((quick ?? []).map((app) => app.close()));
    });

    it('open again on both when it ends, after a source used it up on one', async () => {
      const sources = guesses.map(() => freshSource());
      const retryAfters = await Promise.all(
        guesses.map(async (guess, i) => {
          for (let n = 0; n < sourceBudget(guess, short); n++) {
            expect((await guess.wrong(quick[0], scene, sources[i]!)).status, guess.name).toBe(guess.failure);
          }
          return expectTooMany(await guess.right(quick[1], scene, sources[i]!), guess.operationId, short.window_seconds);
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, Math.max(...retryAfters) * 1000 + 100));
      for (const [i, guess] of guesses.entries()) {
        expect((await guess.right(quick[1], scene, sources[i]!)).status, guess.name).toBe(guess.success);
      }
    });
  });
});
