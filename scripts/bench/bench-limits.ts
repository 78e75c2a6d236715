// The limits a benchmark's Convene runs with (signaling-server.ts, media-server.ts).
import { UNCAPPED } from '../../test/support/signaling.js';

/**
 * Every participant of a benchmark starts from 127.0.0.1 with the same invite code: the signaling
 * caps and the brute-force guard (tested on their own) would refuse most of them.
 */
export const BENCH_LIMITS = {
  rate_limits: { failures_per_source: 1_000_000, failures_per_target: 1_000_000 },
  signaling_caps: UNCAPPED,
};
