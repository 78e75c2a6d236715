/**
 * The bounded soak of issue 8 ("Load"), CI's short variant of `npm run soak` (scripts/soak/): a
 * Convene instance in a child process holds 1,000 signaling connections (20 rooms × 50) through
 * 20 s of timer churn (longer, up to 40 s, until 1,250 sessions have opened; countdowns that expire, stopwatches and countdowns stopped by the
 * moderator, runs ended by the moderator leaving, ready checks), chat, raised hands, guests leaving
 * and coming back, and provoked refusals, with an HTTP mix of rooms, events, invite codes and
 * tickets beside them; then everyone leaves.
 *
 * It proves: no error frame, status or close that was not provoked, and nothing the server logged
 * at warn or above; every frame and answer as the contract says; every stable participant got every
 * `started` and `stopped` of its room exactly once and in order (and nobody a `stopped` of a timer
 * it was not told of); and once everyone has left, the server's heap within 10 MiB of the baseline
 * taken after a warm-up of the same load, no more sockets, handles or live timers than at the
 * baseline, and with Redis no key or subscription of the rooms left. On PostgreSQL and Redis when
 * DATABASE_URL and REDIS_URL are set (the child runs on them), on PGlite in-process otherwise.
 */
import { expect, it } from 'vitest';
import { describeMeasure, describePhase, runSoak } from '../../scripts/soak/soak-driver.js';

it('holds 1,000 connections through timer churn and an HTTP mix without an error, and lets everything go when they leave', async () => {
  const report = await runSoak({ seconds: 20, minSessions: 1_250, warmUpSeconds: 2, log: (line) => console.log(`[soak] ${line}`) });
  const { soak } = report;
  console.log(`[soak] ${describePhase(soak)}\n[soak] baseline ${describeMeasure(report.baseline)}\n[soak] after ${describeMeasure(report.after)}`);

  expect(report.problems.first).toEqual([]);
  expect(report.problems.count).toBe(0);
  expect(report.leaks).toEqual([]);
  expect(report.redisLeft).toEqual([]);

  // the load was what it claims: a thousand held at once, guests coming back, every way a run ends, HTTP beside it
  expect(soak.signaling.peakOpen).toBeGreaterThanOrEqual(1_000);
  expect(soak.signaling.sessions).toBeGreaterThan(1_200);
  for (const run of ['countdown expired', 'stopwatch by_moderator', 'countdown by_moderator', 'stopwatch creator_left']) {
    expect(soak.signaling.runs.get(run), run).toBeGreaterThan(0);
  }
  expect(soak.signaling.provoked).toBeGreaterThan(0);
  expect(soak.http.requests.total()).toBeGreaterThan(100);
  expect(soak.http.provoked).toBeGreaterThan(0);
}, 240_000);
