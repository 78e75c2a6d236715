/** The in-process rate limiter: correct for one instance; several instances need the Redis one. */
import { systemClock, type Clock } from '../clock.js';
import { ExpiringLru } from '../expiring-lru.js';
import { attemptsInFlight, limitOf, tooManyAttempts, type AttemptKey, type RateLimiter, type RateLimitPolicy } from './rate-limiter.js';

interface Window {
  failures: number;
  endsAtMs: number;
}

/** Above this many windows, expired ones are swept out on the next failure (bounded memory under attack). */
const SWEEP_THRESHOLD = 10_000;

export function createLocalRateLimiter(policy: RateLimitPolicy, clock: Clock = systemClock): RateLimiter {
  // unbounded: evicting a window to make room would hand its failures back to an attacker
  const windows = new ExpiringLru<Window>(Infinity, clock);
  /** Attempts reserved and not yet released, per key (an entry only while there are some). */
  const inFlight = new Map<string, number>();

  /**
   * The ms until every used-up key's window ends (0 when only attempts in flight fill a key: they
   * may yet succeed), or -1 when no key is full.
   */
  const waitMs = (keys: readonly AttemptKey[]): number => {
    let wait = -1;
    for (const { scope, key } of keys) {
      const window = windows.get(key);
      const failures = window?.failures ?? 0;
      const limit = limitOf(policy, scope);
      if (window && failures >= limit) wait = Math.max(wait, window.endsAtMs - clock());
      else if (failures + (inFlight.get(key) ?? 0) >= limit) wait = Math.max(wait, 0);
    }
    return wait;
  };
  const countFailure = (keys: readonly AttemptKey[]) => {
    if (windows.size > SWEEP_THRESHOLD) windows.sweep();
    for (const { key } of keys) {
      const window = windows.get(key);
      if (window) window.failures += 1;
      else {
        const endsAtMs = clock() + policy.windowSeconds * 1000;
        windows.set(key, { failures: 1, endsAtMs }, endsAtMs);
      }
    }
  };

  return {
    // atomic because nothing between the look and the reservation awaits: no other attempt runs in between
    async reserve(keys) {
      const wait = waitMs(keys);
      if (wait === 0) throw attemptsInFlight();
      if (wait >= 0) throw tooManyAttempts(wait);
      for (const { key } of keys) inFlight.set(key, (inFlight.get(key) ?? 0) + 1);
    },
    async release(keys, failed) {
      for (const { key } of keys) {
        const left = (inFlight.get(key) ?? 0) - 1;
        if (left > 0) inFlight.set(key, left);
        else inFlight.delete(key);
      }
      if (failed) countFailure(keys);
    },
    async reset(keys) {
      for (const { key } of keys) windows.delete(key);
    },
  };
}
