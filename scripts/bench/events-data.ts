// The events benchmarks' data and their HTTP helpers, shared by events.ts and http.bench.ts: one
// user with 500 events over 2027 (every fifth recurring weekly all year, 20 of those with a moved
// and a cancelled occurrence) and a daily series over 10 years (3,652 occurrences), all created
// through the API as a client would. With BENCH_EVENTS=<n> (5000, 50000) the user has n events: the
// 500 of 2027 and copies of them in the years around it (`seedMoreEvents`, bulk SQL), so a year's
// pages answer the same entries whatever n is and show what the rest of the user's events cost.

/** A JSON call to `<base>/v1<path>` as the bench user; any answer of 300 or more throws. */
export type Call = (method: string, path: string, body?: unknown) => Promise<{ status: number; json: any; link: string | null }>;

export function jsonCaller(baseUrl: string, accessToken: string): Call {
  const headers = { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' };
  return async (method, path, body) => {
    const res = await fetch(`${baseUrl}/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
    return { status: res.status, json: text ? JSON.parse(text) : undefined, link: res.headers.get('link') };
  };
}

export const YEAR_RANGE = 'time_min=2027-01-01T00:00:00Z&time_max=2028-01-01T00:00:00Z';

/** Creates the events; answers the daily series' id. */
export async function seedEvents(call: Call): Promise<{ dailyId: string }> {
  const hour = 3_600_000;
  const year = Date.UTC(2027, 0, 1);
  const iso = (ms: number) => new Date(ms).toISOString();
  for (let i = 0; i < 500; i++) {
    // spread over the year, at whole quarter hours; every fifth event recurs weekly all year
    const start = year + Math.floor((((i * 7919) % 500) / 500) * 365 * 96) * 15 * 60_000;
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
  return { dailyId: daily.id };
}

/** The number of events the bench user has (BENCH_EVENTS, default 500, a multiple of 500). */
export function benchEventCount(): number {
  const count = Number(process.env.BENCH_EVENTS ?? 500);
  if (!Number.isInteger(count) || count < 500 || count % 500 !== 0) throw new Error(`BENCH_EVENTS must be a multiple of 500, not ${process.env.BENCH_EVENTS}`);
  return count;
}

/**
 * Brings the user's events up to `total` with copies of the 500 of 2027 (not of their exceptions),
 * copy k moved by whole years to 2029, 2025, 2030, 2024, … (not 2026 and 2028,
 * whose series would reach into 2027): each with a room and a SIP config of its own as the API makes them, in a few set-based statements (50,000 in seconds, where the API would
 * take minutes). `run` executes one SQL statement on the bench's database.
 */
export async function seedMoreEvents(run: (statement: string) => Promise<unknown>, userId: string, total: number): Promise<void> {
  const copies = total / 500 - 1;
  if (copies <= 0) return;
  if (!/^[0-9a-f-]{36}$/.test(userId)) throw new Error(`not a user id: ${userId}`);
  await run(`create table bench_copies as
    select e.id as source, gen_random_uuid() as room_id, gen_random_uuid() as event_id,
      make_interval(years => case when k % 2 = 1 then 1 + (k + 1) / 2 else -(1 + k / 2) end) as shift, k
    from events e cross join generate_series(1, ${copies}) as k
    where e.created_by = '${userId}' and e.title like 'Meeting %'`);
  await run(`insert into rooms (id, created_by) select room_id, '${userId}' from bench_copies`);
  // 10 digits, unique: 9, then the copy's row number
  await run(`insert into sip_configs (room_id, sip_id, password)
    select room_id, '9' || lpad((row_number() over ())::text, 9, '0'), '0123456789' from bench_copies
    on conflict (sip_id) do nothing`);
  await run(`insert into events (id, room_id, created_by, updated_by, title, description, is_time_independent, is_all_day,
      starts_at, starts_at_tz, ends_at, ends_at_tz, duration_secs, recurrence_pattern, range_end, span_start, span_end)
    select c.event_id, c.room_id, e.created_by, e.updated_by, e.title || ' (' || c.k || ')', e.description, e.is_time_independent, e.is_all_day,
      e.starts_at + c.shift, e.starts_at_tz, e.ends_at + c.shift, e.ends_at_tz, e.duration_secs, e.recurrence_pattern,
      e.range_end + c.shift, e.starts_at + c.shift, e.range_end + c.shift
    from bench_copies c join events e on e.id = c.source`);
  await run('drop table bench_copies');
  await run('analyze');
}

/** Follows the `after` links from `path` (under /v1) to the end; answers the number of items. */
export async function walk(call: Call, path: string): Promise<number> {
  let next: string | undefined = path;
  let items = 0;
  while (next) {
    const res = await call('GET', next);
    items += res.json.length;
    const match = /<([^>]+)>; rel="after"/.exec(res.link ?? '');
    next = match ? afterV1(match[1]!) : undefined;
  }
  return items;
}

/** `http://host/v1/events?…` → `/events?…` */
function afterV1(link: string): string {
  const url = new URL(link);
  return `${url.pathname.replace(/^\/v1/, '')}${url.search}`;
}

/** Runs `fn` sequentially `iterations` times after a warm-up; answers req/s, p50 and p99 in ms. */
export async function measureSequential(iterations: number, fn: () => Promise<unknown>): Promise<{ rps: number; p50: number; p99: number }> {
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
  return { rps: iterations / totalS, p50: pct(50), p99: pct(99) };
}
