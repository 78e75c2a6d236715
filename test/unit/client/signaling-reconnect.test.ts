/**
 * The reconnect policy of the typed signaling client (packages/client/src/signaling-reconnect.ts): its
 * defaults and the options it refuses, at their edges; the backoff's bounds; which closes and
 * failures are retried. The reconnecting itself is tested against a real instance
 * (test/integration/client/signaling-reconnect.test.ts).
 */
import { describe, expect, it } from 'vitest';
import {
  SignalingCommandError,
  SignalingConnectError,
  SignalingProtocolError,
  SignalingStartError,
  SignalingTimeoutError,
} from '../../../packages/client/src/signaling-errors.js';
import { backoffDelay, isRetryableClose, isRetryableFailure, reconnectPolicy } from '../../../packages/client/src/signaling-reconnect.js';

describe('reconnectPolicy', () => {
  it('fills in the defaults, whose delays add up to well under the 120 s a resumption token lasts', () => {
    const policy = reconnectPolicy(true);
    expect(policy).toEqual({ maxAttempts: 10, initialDelayMs: 250, maxDelayMs: 10_000, joinTimeoutMs: 10_000 });
    const longest = Array.from({ length: policy.maxAttempts }, (_, n) => backoffDelay(policy, n + 1, () => 1)).reduce((a, b) => a + b);
    expect(longest).toBe(250 + 500 + 1_000 + 2_000 + 4_000 + 8_000 + 4 * 10_000);
    expect(reconnectPolicy({ maxAttempts: 3 })).toEqual({ ...policy, maxAttempts: 3 });
    // a first delay above the default cap raises the cap with it
    expect(reconnectPolicy({ initialDelayMs: 20_000 }).maxDelayMs).toBe(20_000);
  });

  it('refuses options that make no sense, accepting each at its edge', () => {
    expect(reconnectPolicy({ maxAttempts: 1 }).maxAttempts).toBe(1);
    expect(() => reconnectPolicy({ maxAttempts: 0 })).toThrow(RangeError);
    expect(() => reconnectPolicy({ maxAttempts: 1.5 })).toThrow('reconnect.maxAttempts must be an integer ≥ 1, not 1.5');
    expect(reconnectPolicy({ initialDelayMs: 0, maxDelayMs: 0 })).toMatchObject({ initialDelayMs: 0, maxDelayMs: 0 });
    expect(() => reconnectPolicy({ initialDelayMs: -1 })).toThrow(RangeError);
    expect(() => reconnectPolicy({ initialDelayMs: Number.NaN })).toThrow(RangeError);
    expect(reconnectPolicy({ initialDelayMs: 100, maxDelayMs: 100 }).maxDelayMs).toBe(100);
    expect(() => reconnectPolicy({ initialDelayMs: 100, maxDelayMs: 99 })).toThrow('reconnect.maxDelayMs must be ≥ initialDelayMs, not 99');
    expect(reconnectPolicy({ joinTimeoutMs: 1 }).joinTimeoutMs).toBe(1);
    expect(() => reconnectPolicy({ joinTimeoutMs: 0 })).toThrow(RangeError);
  });
});

describe('backoffDelay', () => {
  const policy = reconnectPolicy({ initialDelayMs: 100, maxDelayMs: 1_000 });
  it('doubles from the first delay up to the cap, each between half and all of it', () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(policy, n, () => 1))).toEqual([100, 200, 400, 800, 1_000, 1_000]);
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(policy, n, () => 0))).toEqual([50, 100, 200, 400, 500, 500]);
    expect(backoffDelay(policy, 3, () => 0.5)).toBe(300);
  });
});

describe('what is retried', () => {
  it('reconnects after the closes without a close frame, of a server going away or overloaded, and after no other', () => {
    const retried = [1001, 1005, 1006, 1011, 1012, 1013, 1014];
    for (const code of [1000, 1001, 1002, 1003, 1005, 1006, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 1015, 4000, 4002]) {
      expect(isRetryableClose({ code, reason: '', wasClean: false }), String(code)).toBe(retried.includes(code));
    }
  });

  it('retries a start answered session_running, 429 or 5xx, a refused socket, a network error, a join without answer; not other refusals', () => {
    const start = (status: number, code: string) => new SignalingStartError(status, { code, message: '', status });
    expect(isRetryableFailure(start(400, 'session_running'))).toBe(true);
    expect(isRetryableFailure(start(429, 'too_many_tickets'))).toBe(true);
    expect(isRetryableFailure(start(500, 'internal_server_error'))).toBe(true);
    expect(isRetryableFailure(start(503, 'service_unavailable'))).toBe(true);
    expect(isRetryableFailure(start(499, 'whatever'))).toBe(false);
    expect(isRetryableFailure(start(400, 'validation_failed'))).toBe(false);
    expect(isRetryableFailure(start(401, 'unauthorized'))).toBe(false);
    expect(isRetryableFailure(start(404, 'not_found'))).toBe(false);
    expect(isRetryableFailure(new SignalingConnectError('refused', 503))).toBe(true);
    expect(isRetryableFailure(new TypeError('fetch failed'))).toBe(true);
    expect(isRetryableFailure(new SignalingTimeoutError('no answer to join within 10000 ms'))).toBe(true);
    const error = { namespace: 'control', timestamp: '', payload: { message: 'error', error: 'invalid_username' } } as const;
    expect(isRetryableFailure(new SignalingCommandError(error as never))).toBe(false);
    expect(isRetryableFailure(new SignalingProtocolError('broken', '{'))).toBe(false);
  });
});
