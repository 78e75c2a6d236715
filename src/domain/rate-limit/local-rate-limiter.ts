/** The in-process rate limiter: correct for one instance; several instances need the Redis one. */
import { systemClock, type Clock } from '../clock.js';
import { ExpiringLru } from '../expiring-lru.js';
import { limitOf, tooManyAttempts, type AttemptKey, type RateLimiter, type RateLimitPolicy } from './rate-limiter.js';

interface Window {
  failures: number;
  endsAtMs: number;
}

/** Above this many windows, expired ones are swept out on the next failure (bounded memory under attack). */
const SWEEP_THRESHOLD = 10_000;

export function createLocalRateLimiter(policy: RateLimitPolicy, clock: Clock = systemClock): RateLimiter {
  // unbounded: evicting a window to make room would hand its failures back to an attacker
  const windows = new ExpiringLru<Window>(Infinity, clock);

  return {
    async check(keys: readonly AttemptKey[]) {
      for (const { scope, key } of keys) {
        const window = windows.get(key);
        if (window && window.failures >= limitOf(policy, scope)) throw tooManyAttempts(window.endsAtMs - clock());
      }
    },
    async recordFailure(keys: readonly AttemptKey[]) {
      if (windows.size > SWEEP_THRESHOLD) windows.sweep();
      for (const { key } of keys) {
        const window = windows.get(key);
        if (window) window.failures += 1;
        else {
          const endsAtMs = clock() + policy.windowSeconds * 1000;
          windows.set(key, { failures: 1, endsAtMs }, endsAtMs);
        }
      }
    },
    async reset(keys: readonly AttemptKey[]) {
      for (const { key } of keys) windows.delete(key);
    },
  };
}
