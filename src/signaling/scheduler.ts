/**
 * Timers of the signaling modules (a countdown's expiry), behind an interface so that module tests
 * can run a countdown on a fake clock instead of waiting for it.
 */
import { systemClock, type Clock } from '../domain/clock.js';

export interface Scheduler {
  readonly now: Clock;
  /** Runs `task` at `atMs` (by `now`), or at once when that is past; returns a cancel function. */
  at(atMs: number, task: () => void): () => void;
}

/** The longest delay setTimeout takes (about 24.8 days); longer waits are chained. */
const MAX_DELAY_MS = 2_147_483_647;

export function systemScheduler(now: Clock = systemClock): Scheduler {
  return {
    now,
    at(atMs, task) {
      let handle: NodeJS.Timeout;
      // setTimeout runs on the monotonic clock and may fire a millisecond before `now` reaches
      // `atMs` (a countdown's `expired` stamped before its `ends_at`): then it waits the rest
      const fire = () => (now() < atMs ? arm() : task());
      const arm = () => {
        const delay = atMs - now();
        handle = setTimeout(fire, Math.max(0, Math.min(delay, MAX_DELAY_MS)));
        handle.unref();
      };
      arm();
      return () => clearTimeout(handle);
    },
  };
}
