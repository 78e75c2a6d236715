/**
 * Brute-force protection for guessable secrets (room passwords, invite codes, call-in pins).
 *
 * Failed attempts are counted in a fixed window per key. Two kinds of key guard every attempt:
 * the caller's address (`source`: one client guessing many things) and the thing guessed at
 * (`target`: many clients guessing one room). Once a key has `limit` failures in its window, every
 * further attempt on it is refused with 429 until the window ends, before the secret is compared,
 * so a refused attempt reveals nothing.
 *
 * Usage: `await limiter.check(keys)` before comparing, `recordFailure(keys)` when it was wrong.
 * A success resets nothing by default: whoever knows one secret (their own room's password) could
 * otherwise clear their count between guesses at others. `reset` exists for callers whose success
 * proves more than that.
 */
import type { Config } from '../../config/schema.js';
import { errors } from '../../http/errors.js';

export type AttemptScope = 'source' | 'target';

export interface AttemptKey {
  scope: AttemptScope;
  /** e.g. `pw:src:203.0.113.7`, `pw:target:<room id>`. */
  key: string;
}

export interface RateLimitPolicy {
  windowSeconds: number;
  failuresPerSource: number;
  failuresPerTarget: number;
}

export interface RateLimiter {
  /** Throws 429 `too_many_requests` (with `Retry-After`) when any key has used up its failures. */
  check(keys: readonly AttemptKey[]): Promise<void>;
  recordFailure(keys: readonly AttemptKey[]): Promise<void>;
  /** Forgets the keys' failures (e.g. the source's after a correct guess). */
  reset(keys: readonly AttemptKey[]): Promise<void>;
}

/**
 * The keys of one attempt at guessing `kind` (`pw`, `invite`, `pin` …) from `source` (the client's
 * address) at `target` (the room, invite or SIP id). Kinds are counted apart so that a typo in a
 * password does not count against the same user's invite link.
 */
export function attemptKeys(kind: string, source: string, target: string): AttemptKey[] {
  return [
    { scope: 'source', key: `${kind}:src:${source}` },
    { scope: 'target', key: `${kind}:target:${target}` },
  ];
}

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

/**
 * Runs one guarded attempt: refuses it when a key is over its limit and counts it when `attempt`
 * returns false. Returns what `attempt` returned.
 */
export async function guardAttempt(
  limiter: RateLimiter,
  keys: readonly AttemptKey[],
  attempt: () => Promise<boolean> | boolean,
): Promise<boolean> {
  await limiter.check(keys);
  const succeeded = await attempt();
  if (!succeeded) await limiter.recordFailure(keys);
  return succeeded;
}
