// The event listings under load: `GET /v1/events` over a year for a user with 500 events (100 of
// them recurring weekly, 20 of those with two exceptions), and `GET /v1/events/{id}/instances` of a
// daily series over 10 years (3,652 occurrences). Sequential requests against a real instance on
// 127.0.0.1 (PGlite in memory, or PostgreSQL with DATABASE_URL); prints req/s, p50 and p99. The
// same data under concurrent load, in a server process of its own, is part of http.bench.ts.
// Run: npm run bench:events   (or: DATABASE_URL=postgres://… npm run bench:events; BENCH_EVENTS=50000 for
// a user with 50,000 events, the 500 and copies of them in other years: events-data.ts)
import { sql } from 'kysely';
import { dbOf, startTestApp } from '../../test/support/test-app.js';
import { benchEventCount, jsonCaller, measureSequential, seedEvents, seedMoreEvents, walk, YEAR_RANGE } from './events-data.js';

const app = await startTestApp();
try {
  const user = await app.login('bench');
  // the login's token lives 5 minutes; the bench may take longer
  const token = await app.issuer.accessToken({ sub: 'sub-bench' }, { expiresIn: 3600 });
  const call = jsonCaller(app.url, token);

  console.log('seeding 500 events (100 weekly, 20 of them with 2 exceptions) and a 10-year daily series …');
  const seedStarted = Date.now();
  const { dailyId } = await seedEvents(call);
  const eventCount = benchEventCount();
  await seedMoreEvents((statement) => sql.raw(statement).execute(dbOf(app)), user.id, eventCount);
  console.log(
    `seeded in ${((Date.now() - seedStarted) / 1000).toFixed(1)} s (${user.name}, ${eventCount} events, ${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite in memory'})\n`,
  );

  async function measure(label: string, iterations: number, fn: () => Promise<unknown>): Promise<void> {
    const { rps, p50, p99 } = await measureSequential(iterations, fn);
    console.log(`${label.padEnd(64)} ${rps.toFixed(0).padStart(6)} req/s   p50 ${p50.toFixed(2).padStart(7)} ms   p99 ${p99.toFixed(2).padStart(7)} ms`);
  }

  console.log(`a year of events: ${await walk(call, `/events?${YEAR_RANGE}&per_page=100`)} entries (events and exceptions)`);
  console.log(`10 years of a daily series: ${await walk(call, `/events/${dailyId}/instances?per_page=100`)} instances\n`);

  await measure('GET /events, a year, first page (per_page=30)', 300, () => call('GET', `/events?${YEAR_RANGE}`));
  await measure('GET /events, a year, first page (per_page=100)', 200, () => call('GET', `/events?${YEAR_RANGE}&per_page=100`));
  await measure('GET /events, a year, all pages (per_page=100, 6 requests)', 100, () => walk(call, `/events?${YEAR_RANGE}&per_page=100`));
  await measure('GET /events, a year, invitees_max=10 (per_page=100)', 200, () => call('GET', `/events?${YEAR_RANGE}&per_page=100&invitees_max=10`));
  await measure('GET /instances, daily × 10 years, first page (per_page=100)', 300, () => call('GET', `/events/${dailyId}/instances?per_page=100`));
  await measure('GET /instances, daily × 10 years, last year (time_min, 100)', 300, () =>
    call('GET', `/events/${dailyId}/instances?per_page=100&time_min=2036-01-01T00:00:00Z`),
  );
  await measure('GET /instances, daily × 10 years, all pages (37 requests)', 10, () => walk(call, `/events/${dailyId}/instances?per_page=100`));
} finally {
  await app.close();
}
