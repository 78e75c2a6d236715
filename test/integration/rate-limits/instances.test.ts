/**
 * Two Convene instances over one database and one Redis share one budget per source and per target:
 * wrong guesses fired at once and spread over both get no more comparisons in total than the limit,
 * a source or target used up on one is refused on the other, a short window opens again on both,
 * and one source's failures on one instance refuse nobody else's right guesses on the other.
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
    const [owner, invitee] = await loginPair(first);
    scene = await createScene(first, owner, invitee);
  });
  /** The instance the i-th request goes to: every other one to each. */
  const instance = (i: number) => (i % 2 === 0 ? first : second);

  describe.each(guesses)('$name', (guess) => {
    it(`compare ${limits.failures_per_source} wrong guesses in all from one source firing ${AT_ONCE} at both at once`, async () => {
      const source = freshSource();
      const wrong = (i: number) => guess.wrong(instance(i), scene, source);
      const failures = failuresOf(guess, limits.window_seconds, await burst(AT_ONCE, wrong));
      expect(failures).toBeLessThanOrEqual(limits.failures_per_source);
      if (!guess.afterAnotherGuard) expect(failures).toBe(limits.failures_per_source);
      let n = 0;
      const left = await failuresLeft(guess, limits.window_seconds, () => wrong(n++));
      expect(failures + left).toBe(limits.failures_per_source);
      for (const app of [first, second]) expectTooMany(await guess.right(app, scene, source), guess.operationId, limits.window_seconds);
    });

    it(`compare ${limits.failures_per_target} wrong guesses in all at one target from ${AT_ONCE} sources firing at both at once`, async () => {
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
      }
    });

    it("refuse none of other sources' right guesses on one instance while a source fires wrong ones on the other", async () => {
      const attacker = freshSource();
      const [attack, others] = await Promise.all([
        burst(AT_ONCE / 2, () => guess.wrong(first, scene, attacker)),
        burst(10, () => guess.right(second, scene, freshSource())),
      ]);
      expect(failuresOf(guess, limits.window_seconds, attack)).toBeLessThanOrEqual(limits.failures_per_source);
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
          for (let n = 0; n < short.failures_per_source; n++) {
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
