// The event listings under load: `GET /v1/events` over a year for a user with 500 events (100 of
// them recurring weekly, 20 of those with two exceptions), and `GET /v1/events/{id}/instances` of a
// daily series over 10 years (3,652 occurrences). Sequential requests against a real instance on
// 127.0.0.1 (PGlite in memory, or PostgreSQL with DATABASE_URL); prints req/s, p50 and p99.
// Run: npm run bench:events   (or: DATABASE_URL=postgres://… npm run bench:events)
import { startTestApp } from '../../test/support/test-app.js';

const app = await startTestApp();
try {
  const user = await app.login('bench');
  // the login's token lives 5 minutes; the bench may take longer
  const token = await app.issuer.accessToken({ sub: 'sub-bench' }, { expiresIn: 3600 });
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

  async function call(method: string, path: string, body?: unknown): Promise<{ status: number; json: any; link: string | null }> {
    const res = await fetch(`${app.url}/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
    return { status: res.status, json: text ? JSON.parse(text) : undefined, link: res.headers.get('link') };
  }

  const hour = 3_600_000;
  const year = Date.UTC(2027, 0, 1);
  const iso = (ms: number) => new Date(ms).toISOString();
  console.log('seeding 500 events (100 weekly, 20 of them with 2 exceptions) and a 10-year daily series …');
  const seedStarted = Date.now();
  for (let i = 0; i < 500; i++) {
    // spread over the year, at whole quarter hours; every fifth event recurs weekly all year
    const start = year + Math.floor(((i * 7919) % 500) / 500 * 365 * 96) * 15 * 60_000;
    const recurring = i % 5 === 0;
    const { json: event } = await call('POST', '/events?suppress_email_notification=true', {
      title: `Meeting ${i}`,
      description: 'Benchmark event',
      is_time_independent: false,
      is_all_day: false,
      starts_at: { datetime: iso(start), timezone: 'Europe/Berlin' },
      ends_at: { datetime: iso(start + hour), timezone: 'Europe/Berlin' },
      ...(recurring ? { recurrence_pattern: ['RRULE:FREQ=WEEKLY;COUNT=52'] } : {}),
    });
    if (recurring && i % 25 === 0) {
      const { json: instances } = await call('GET', `/events/${event.id}/instances?per_page=3`);
      await call('PATCH', `/events/${event.id}/instances/${instances[1].instance_id}`, { title: 'Moved' });
      await call('PATCH', `/events/${event.id}/instances/${instances[2].instance_id}`, { status: 'cancelled' });
    }
  }
  const { json: daily } = await call('POST', '/events?suppress_email_notification=true', {
    title: 'Daily stand-up',
    description: '',
    is_time_independent: false,
    is_all_day: false,
    starts_at: { datetime: '2027-01-01T08:30:00Z', timezone: 'Europe/Berlin' },
    ends_at: { datetime: '2027-01-01T08:45:00Z', timezone: 'Europe/Berlin' },
    recurrence_pattern: ['RRULE:FREQ=DAILY;UNTIL=20361231T235959Z'],
  });
  console.log(`seeded in ${((Date.now() - seedStarted) / 1000).toFixed(1)} s (${user.name}, ${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite in memory'})\n`);

  /** Runs `fn` sequentially for `iterations` after a warm-up; prints and answers the figures. */
  async function measure(label: string, iterations: number, fn: () => Promise<unknown>): Promise<void> {
    for (let i = 0; i < Math.min(20, iterations); i++) await fn();
    const times: number[] = [];
    const started = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) {
      const t = process.hrtime.bigint();
      await fn();
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    const totalS = Number(process.hrtime.bigint() - started) / 1e9;
    times.sort((a, b) => a - b);
    const pct = (p: number) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))]!;
    console.log(
      `${label.padEnd(64)} ${(iterations / totalS).toFixed(0).padStart(6)} req/s   p50 ${pct(50).toFixed(2).padStart(7)} ms   p99 ${pct(99).toFixed(2).padStart(7)} ms`,
    );
  }

  /** Follows the `after` links from `path` to the end; answers the number of items. */
  async function walk(path: string): Promise<number> {
    let next: string | undefined = path;
    let items = 0;
    while (next) {
      const res = await call('GET', next);
      items += res.json.length;
      const match = /<([^>]+)>; rel="after"/.exec(res.link ?? '');
      next = match ? new URL(match[1]!).href.slice(`${app.url}/v1`.length) : undefined;
    }
    return items;
  }

  const yearRange = 'time_min=2027-01-01T00:00:00Z&time_max=2028-01-01T00:00:00Z';
  console.log(`a year of events: ${await walk(`/events?${yearRange}&per_page=100`)} entries (events and exceptions)`);
  console.log(`10 years of a daily series: ${await walk(`/events/${daily.id}/instances?per_page=100`)} instances\n`);

  await measure('GET /events, a year, first page (per_page=30)', 300, () => call('GET', `/events?${yearRange}`));
  await measure('GET /events, a year, first page (per_page=100)', 200, () => call('GET', `/events?${yearRange}&per_page=100`));
  await measure('GET /events, a year, all pages (per_page=100, 6 requests)', 30, () => walk(`/events?${yearRange}&per_page=100`));
  await measure('GET /events, a year, invitees_max=10 (per_page=100)', 200, () => call('GET', `/events?${yearRange}&per_page=100&invitees_max=10`));
  await measure('GET /instances, daily × 10 years, first page (per_page=100)', 300, () => call('GET', `/events/${daily.id}/instances?per_page=100`));
  await measure('GET /instances, daily × 10 years, last year (time_min, 100)', 300, () =>
    call('GET', `/events/${daily.id}/instances?per_page=100&time_min=2036-01-01T00:00:00Z`),
  );
  await measure('GET /instances, daily × 10 years, all pages (37 requests)', 10, () => walk(`/events/${daily.id}/instances?per_page=100`));
} finally {
  await app.close();
}
