/**
 * Which signaling instances are alive, for crash cleanup (issue 8): an instance killed with
 * participants (SIGKILL, OOM, a lost machine) runs none of their departures, so their records in
 * Redis would stay for good. Each instance takes a random id at start and keeps the key
 * `convene:signaling:instance:<id>` alive (`ttlMs`, refreshed every `refreshMs`, at most half of it,
 * so one late refresh does not lose it); the member and waiting-room records name the instance
 * hosting them, and an instance whose key is gone is dead: the others remove its records
 * (src/signaling/modules/control/membership-sweep.ts).
 *
 * A key can also vanish while its instance lives: Redis away (or restarted empty) for longer than
 * the lifetime. Then every instance's key goes at once, and after Redis returns an instance that
 * has refreshed its own key must not take the others, not refreshed yet, for dead. So an instance
 * judges others only once its own key has been held without a break for a whole lifetime since
 * its last failed or lost refresh (`gone` answers nothing before): every live instance has
 * refreshed within that time. An instance that finds its own key was gone tells its listeners
 * (`onLost`): the others may have removed its records meanwhile.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import type { Logger } from '../logger.js';

export const instanceKey = (instanceId: string) => `convene:signaling:instance:${instanceId}`;

export interface LivenessTiming {
  ttlMs: number;
  refreshMs: number;
}

export interface InstanceLiveness {
  /** This instance's id, written into the records it hosts. */
  readonly id: string;
  /** Resolves once this instance's key exists (before it writes a record naming it); rejects when Redis cannot be reached. */
  registered(): Promise<void>;
  /** Of these instance ids, those whose key is gone; none while this instance cannot judge (see the header), never its own. */
  gone(instanceIds: Iterable<string>): Promise<Set<string>>;
  /** `listener` runs when a refresh finds this instance's key was gone (it is set again at once). */
  onLost(listener: () => void): void;
  /** Stops the refreshing and deletes the key (call it after this instance's participants have left). */
  close(): Promise<void>;
}

export function startInstanceLiveness(redis: Redis, timing: LivenessTiming, logger: Logger): InstanceLiveness {
  const { ttlMs, refreshMs } = timing;
  const id = randomUUID();
  const key = instanceKey(id);
  const log = logger.child({ instanceId: id });
  const lostListeners: Array<() => void> = [];
  /** Since when the key has been held without a failed or lost refresh (monotonic ms); undefined: not now. */
  let heldSince: number | undefined;
  /** The last refresh that succeeded. */
  let lastHeldAt = -Infinity;
  let everSet = false;
  let closed = false;
  let inFlight: Promise<void> | undefined;

  /** Sets the key for another lifetime; throws when Redis cannot be reached. */
  async function refresh(): Promise<void> {
    try {
      const previous = await redis.set(key, '1', 'PX', ttlMs, 'GET');
      const now = performance.now();
      if (previous === null || heldSince === undefined) heldSince = now;
      lastHeldAt = now;
      if (previous === null && everSet && !closed) {
        log.warn('this instance was taken for dead (its liveness key had expired): its participants may have been removed');
        for (const listener of lostListeners) listener();
      }
      everSet = true;
    } catch (err) {
      heldSince = undefined;
      throw err;
    }
  }

  /** One refresh at a time; a caller arriving meanwhile waits for the one under way. */
  function refreshOnce(): Promise<void> {
    inFlight ??= refresh().finally(() => (inFlight = undefined));
    return inFlight;
  }

  const timer = setInterval(() => {
    refreshOnce().catch((err: unknown) => log.warn({ err }, 'instance liveness not refreshed'));
  }, refreshMs);
  timer.unref();
  refreshOnce().catch((err: unknown) => log.warn({ err }, 'instance liveness not registered'));

  function canJudge(): boolean {
    const now = performance.now();
    return heldSince !== undefined && now - heldSince >= ttlMs && now - lastHeldAt < ttlMs;
  }

  return {
    id,

    async registered() {
      if (everSet && heldSince !== undefined) return;
      await refreshOnce();
    },

    async gone(instanceIds) {
      const others = [...new Set(instanceIds)].filter((other) => other !== id);
      if (others.length === 0 || !canJudge()) return new Set();
      const alive = await redis.mget(others.map(instanceKey));
      // judged again: a refresh that failed during the read makes the read worth nothing
      if (!canJudge()) return new Set();
      return new Set(others.filter((_, index) => alive[index] === null));
    },

    onLost(listener) {
      lostListeners.push(listener);
    },

    async close() {
      closed = true;
      clearInterval(timer);
      await inFlight?.catch(() => undefined);
      await redis.del(key).catch((err: unknown) => log.warn({ err }, 'instance liveness key not deleted'));
    },
  };
}
