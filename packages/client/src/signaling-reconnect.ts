/**
 * Coming back after a dropped socket: which closes and failures are worth another attempt, how long
 * to wait before each (exponential backoff with jitter, bounded), and the loop of attempts. The
 * connection (signaling-connection.ts) runs the loop; `startSignaling` (signaling.ts) supplies the
 * step that gets a new ticket with the resumption token and opens a socket with it.
 */
import { SignalingCommandError, SignalingProtocolError, SignalingStartError } from './signaling-errors.js';
import type { ReconnectOptions, SignalingClose, WebSocketLike } from './signaling-types.js';

export type ReconnectPolicy = Required<ReconnectOptions>;

/** How a connection reopens: a new ticket for the same participant, and a socket (opening) with it. */
export interface Reconnector {
  policy: ReconnectPolicy;
  reopen(signal: AbortSignal): Promise<WebSocketLike>;
}

const DEFAULTS: ReconnectPolicy = { maxAttempts: 10, initialDelayMs: 250, maxDelayMs: 10_000, joinTimeoutMs: 10_000 };

/** The policy for `reconnect: true` or the options given; a RangeError for options that make no sense. */
export function reconnectPolicy(options: true | ReconnectOptions): ReconnectPolicy {
  const given = options === true ? {} : options;
  const policy: ReconnectPolicy = {
    maxAttempts: given.maxAttempts ?? DEFAULTS.maxAttempts,
    initialDelayMs: given.initialDelayMs ?? DEFAULTS.initialDelayMs,
    maxDelayMs: given.maxDelayMs ?? Math.max(DEFAULTS.maxDelayMs, given.initialDelayMs ?? 0),
    joinTimeoutMs: given.joinTimeoutMs ?? DEFAULTS.joinTimeoutMs,
  };
  if (!Number.isInteger(policy.maxAttempts) || policy.maxAttempts < 1)
    throw new RangeError(`reconnect.maxAttempts must be an integer ≥ 1, not ${policy.maxAttempts}`);
  if (!(policy.initialDelayMs >= 0)) throw new RangeError(`reconnect.initialDelayMs must be ≥ 0, not ${policy.initialDelayMs}`);
  if (!(policy.maxDelayMs >= policy.initialDelayMs)) throw new RangeError(`reconnect.maxDelayMs must be ≥ initialDelayMs, not ${policy.maxDelayMs}`);
  if (!(policy.joinTimeoutMs > 0)) throw new RangeError(`reconnect.joinTimeoutMs must be > 0, not ${policy.joinTimeoutMs}`);
  return policy;
}

/** The wait before attempt n (from 1): between half and all of the doubled delay, capped ("equal jitter"). */
export function backoffDelay(policy: ReconnectPolicy, attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/**
 * The closes worth reconnecting after: no close frame (1005, 1006: the network, a dead peer), the
 * server going away or restarting (1001, 1012), an internal error or overload (1011, 1013, 1014).
 * Every other close ends the session: 1000 is the server's word after a kick, a ban, the room's end
 * or a takeover by the resumption token; 1007 and 1009 (and 4002, the client's own) say a frame was
 * wrong, which another socket would not cure.
 */
const RETRYABLE_CLOSES: ReadonlySet<number> = new Set([1001, 1005, 1006, 1011, 1012, 1013, 1014]);

export const isRetryableClose = (close: SignalingClose): boolean => RETRYABLE_CLOSES.has(close.code);

/**
 * Whether an attempt's failure may pass with time. A start answered `session_running` (the server
 * has not yet noticed the drop), 429 or 5xx, a refused or unreachable socket, a network error, a
 * `join` without an answer: yes. Any other refused start (401 with an expired token, 404 after a ban
 * or the room's deletion, a wrong password …), an `error` answering `join`, a broken frame: no.
 */
export function isRetryableFailure(err: unknown): boolean {
  if (err instanceof SignalingStartError) return err.code === 'session_running' || err.status === 429 || err.status >= 500;
  return !(err instanceof SignalingCommandError || err instanceof SignalingProtocolError);
}

export interface RetryHooks {
  /** The drop that set the loop off. */
  cause: SignalingClose;
  /** Ends the loop (the caller closed the connection): the wait or attempt under way fails with its reason. */
  signal: AbortSignal;
  /** Called before each attempt's wait. */
  onRetry(retry: { attempt: number; delayMs: number; cause: SignalingClose | Error }): void;
}

/**
 * Runs `attempt` until it succeeds, waiting the policy's delay before each try; rethrows a failure
 * that is not retryable, the last one after `maxAttempts`, or the signal's reason once it aborts.
 */
export async function retryWithBackoff<T>(policy: ReconnectPolicy, attempt: () => Promise<T>, hooks: RetryHooks): Promise<{ value: T; attempt: number }> {
  let cause: SignalingClose | Error = hooks.cause;
  for (let n = 1; ; n++) {
    const delayMs = backoffDelay(policy, n);
    hooks.onRetry({ attempt: n, delayMs, cause });
    await sleep(delayMs, hooks.signal);
    try {
      return { value: await attempt(), attempt: n };
    } catch (err) {
      if (hooks.signal.aborted) throw hooks.signal.reason;
      if (n >= policy.maxAttempts || !isRetryableFailure(err)) throw err;
      cause = err instanceof Error ? err : new Error(String(err));
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
