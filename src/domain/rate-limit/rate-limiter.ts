/**
 * Brute-force protection for guessable secrets (room passwords, invite codes, call-in pins).
 *
 * Failed attempts are counted in a fixed window per key. Two kinds of key guard an attempt: the
 * caller's address (`source`: one client guessing many things) and the thing guessed at (`target`:
 * many clients guessing one thing). Once a key has `limit` failures in its window, every further
 * attempt on it is refused with 429 until the window ends, before the secret is compared, so a
 * refused attempt reveals nothing.
 *
 * A target key refuses everyone who shares it, the honest holder of the right secret included; so
 * each caller chooses a target that strangers do not share (see `start.service.ts`): a room password
 * is counted per room and per account or invite code asking for it, an invite code per code guessed
 * (the right one is never that target), a call-in pin per call-in id (whose failures hold that id's
 * dial-in only, never the gateway's other calls: a gateway's calls all share its address, so they
 * have no source key).
 *
 * Usage: `guardAttempt(limiter, keys, attempt)`. Before the secret is compared it reserves the
 * attempt (`reserve`: in one atomic step, refuse when a key's failures plus the attempts in flight
 * on it reach its limit, else add the attempt to those in flight), and afterwards `release`s it,
 * counting it when it failed. Reserving is what makes the limit hold under concurrency: with a
 * check before and a count after, 100 guesses fired at once all pass the check before the first
 * failure is counted, and all 100 are compared. While attempts in flight alone fill a key (they may
 * yet succeed), `guardAttempt` waits for them, up to 2 s, and then answers 429 with Retry-After 1;
 * a key whose failures fill it is refused at once, until its window ends.
 * A success resets nothing by default: whoever knows one secret (their own room's password) could
 * otherwise clear their count between guesses at others. `reset` exists for callers whose success
 * proves more than that.
 */
import type { Config } from '../../config/schema.js';
import { errors } from '../../errors.js';

export type AttemptScope = 'source' | 'target';

export interface AttemptKey {
  scope: AttemptScope;
  /** e.g. `pw:src:203.0.113.7`, `pin:target:<call-in id>`. */
  key: string;
}

export interface RateLimitPolicy {
  windowSeconds: number;
  failuresPerSource: number;
  failuresPerTarget: number;
}

export interface RateLimiter {
  /**
   * Atomically: throws 429 `too_many_requests` when a key's failures, or its failures and attempts in
   * flight, reach its limit (`Retry-After`: until the last used-up window ends, or 1 s), and
   * otherwise puts the attempt in flight on every key.
   */
  reserve(keys: readonly AttemptKey[]): Promise<void>;
  /** Ends a reserved attempt; `failed`: count it as a failure (its window starts with the first). */
  release(keys: readonly AttemptKey[], failed: boolean): Promise<void>;
  /** Forgets the keys' failures (e.g. the source's after a correct guess). */
  reset(keys: readonly AttemptKey[]): Promise<void>;
}

/**
 * The keys of one attempt at guessing `kind` (`pw`, `invite`, `pin` …) from `source` (the client's
 * address) at `target`. Kinds are counted apart so that a typo in a password does not count against
 * the same user's invite link.
 */
export function attemptKeys(kind: string, source: string, target: string): AttemptKey[] {
  return [sourceKey(kind, source), targetKey(kind, target)];
}

export const sourceKey = (kind: string, source: string): AttemptKey => ({ scope: 'source', key: `${kind}:src:${source}` });
export const targetKey = (kind: string, target: string): AttemptKey => ({ scope: 'target', key: `${kind}:target:${target}` });

export function rateLimitPolicy(config: Config['rate_limits']): RateLimitPolicy {
  return {
    windowSeconds: config.window_seconds,
    failuresPerSource: config.failures_per_source,
    failuresPerTarget: config.failures_per_target,
  };
}

export function limitOf(policy: RateLimitPolicy, scope: AttemptScope): number {
  return scope === 'source' ? policy.failuresPerSource : policy.failuresPerTarget;
}

/** Retry-After is whole seconds, at least 1 (0 would invite an immediate retry that still fails). */
export function tooManyAttempts(remainingMs: number) {
  return errors.tooManyRequests(Math.max(1, Math.ceil(remainingMs / 1000)));
}

/** The refusals of `reserve` made for attempts in flight alone (no window used up): they may yet all succeed. */
const inFlightRefusals = new WeakSet<object>();

/** A 429 for attempts in flight alone: `guardAttempt` waits for them to end before it gives up. */
export function attemptsInFlight() {
  const refusal = tooManyAttempts(0);
  inFlightRefusals.add(refusal);
  return refusal;
}

/**
 * How long `guardAttempt` waits for a key's attempts in flight to end before it answers 429. An
 * attempt is one lookup (milliseconds), so a burst of right guesses from one address (guests behind
 * one NAT opening the same invitation at 9:00, a call-in gateway's calls) is served a few at a time
 * instead of refused; wrong guesses wait too, and are then refused for their used-up window.
 */
const IN_FLIGHT_WAIT_MS = 2_000;
const IN_FLIGHT_FIRST_DELAY_MS = 2;
const IN_FLIGHT_MAX_DELAY_MS = 50;

/**
 * Runs one guarded attempt: refuses it (429) when a key is over its limit, and otherwise reserves it
 * before it runs, so that concurrent attempts never exceed the limit; it counts as a failure when
 * `attempt` returns false (not when it throws: an error, e.g. a database outage, tells the caller
 * nothing about the secret). Returns what `attempt` returned.
 */
export async function guardAttempt(limiter: RateLimiter, keys: readonly AttemptKey[], attempt: () => Promise<boolean> | boolean): Promise<boolean> {
  await reserveWaiting(limiter, keys);
  let succeeded: boolean;
  try {
    succeeded = await attempt();
  } catch (err) {
    await limiter.release(keys, false).catch(() => undefined); // the attempt's own error is the one to report
    throw err;
  }
  await limiter.release(keys, !succeeded);
  return succeeded;
}

/** `reserve`, retried with growing pauses while only attempts in flight stand in the way (IN_FLIGHT_WAIT_MS). */
async function reserveWaiting(limiter: RateLimiter, keys: readonly AttemptKey[]): Promise<void> {
  const deadline = Date.now() + IN_FLIGHT_WAIT_MS;
  for (let delay = IN_FLIGHT_FIRST_DELAY_MS; ; delay = Math.min(2 * delay, IN_FLIGHT_MAX_DELAY_MS)) {
    try {
      return await limiter.reserve(keys);
    } catch (err) {
      if (!(err instanceof Object && inFlightRefusals.has(err)) || Date.now() + delay > deadline) throw err;
    }
    // jitter, so that the waiters of one burst do not all come back at once
    await new Promise((resolve) => setTimeout(resolve, delay * (0.5 + Math.random())));
  }
}
