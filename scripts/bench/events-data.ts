// The events benchmarks' data and their HTTP helpers, shared by events.ts and http.bench.ts: one
// user with 500 events over 2027 (every fifth recurring weekly all year, 20 of those with a moved
// and a cancelled occurrence) and a daily series over 10 years (3,652 occurrences), all created
// through the API as a client would.

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
