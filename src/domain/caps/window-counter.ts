/**
 * Counts events per key in fixed windows (the tickets a user, an invite code or an address was
 * issued, issue 22): an event is taken only when every one of its keys is below its limit, and then
 * counted on all of them. A refused event counts nowhere, so a client that keeps trying is let in
 * again when the window ends. In-process here (one instance); redis-window-counter.ts shares the
 * counts between instances.
 */
import { systemClock, type Clock } from '../clock.js';
import { ExpiringLru } from '../expiring-lru.js';

export interface CappedKey {
  /** e.g. `tickets:user:<id>`. */
  key: string;
  limit: number;
}

export type Take = { taken: true } | { taken: false; key: CappedKey; retryAfterMs: number };

export interface WindowCounter {
  /** Atomically: refuses when a key's count in its window has reached its limit, else counts one on every key. */
  take(keys: readonly CappedKey[], windowMs: number): Promise<Take>;
}

/** Above this many windows, expired ones are swept out on the next take (bounded memory under a flood of addresses). */
const SWEEP_THRESHOLD = 10_000;

export function createLocalWindowCounter(clock: Clock = systemClock): WindowCounter {
  const windows = new ExpiringLru<{ count: number; endsAtMs: number }>(Infinity, clock);
  return {
    // atomic: nothing between the look and the count awaits
    async take(keys, windowMs) {
      for (const capped of keys) {
        const window = windows.get(capped.key);
        if (window && window.count >= capped.limit) return { taken: false, key: capped, retryAfterMs: window.endsAtMs - clock() };
      }
      if (windows.size > SWEEP_THRESHOLD) windows.sweep();
      for (const { key } of keys) {
        const window = windows.get(key);
        if (window) window.count += 1;
        else {
          const endsAtMs = clock() + windowMs;
          windows.set(key, { count: 1, endsAtMs }, endsAtMs);
        }
      }
      return { taken: true };
    },
  };
}
