import { beforeEach, describe, expect, it } from 'vitest';
import { useTestApp, type TestUser } from '../../support/test-app.js';
import { afterCursor, allPages, at, createEvent, invite, send, timeIndependentBody, timedBody, type Event } from '../../support/events.js';

const app = useTestApp();
let alice: TestUser;
beforeEach(async () => {
  alice = await app.login('alice');
});

const list = (query = '', token = alice.accessToken) => send(app, 'GET', `/events${query ? `?${query}` : ''}`, { token });
const ids = (items: { id: string }[]) => items.map((i) => i.id);

/** A one-hour event of alice starting at `start` (UTC). */
const hourAt = (start: string, extra: Record<string, unknown> = {}) => {
  const end = new Date(new Date(start).getTime() + 3_600_000).toISOString();
  return createEvent(app, alice, timedBody({ title: start, starts_at: at(start), ends_at: at(end), ...extra }), '?suppress_email_notification=true');
};

describe('get_events order and pagination', () => {
  it('lists time-independent events first, then by start, ties by creation', async () => {
    const late = await hourAt('2026-12-10T09:00:00Z');
    const early = await hourAt('2026-12-01T09:00:00Z');
    const ti = await createEvent(app, alice, timeIndependentBody());
    const sameStart = await hourAt('2026-12-01T09:00:00Z');
    const res = await list();
    expect(res.status).toBe(200);
    expect(ids(res.json)).toEqual([ti.id, early.id, sameStart.id, late.id]);
    expect(res.link).toBeNull();
  });

  it('walks 25 events in pages of 10 without duplicates or gaps, linking only while more follow', async () => {
    const created: Event[] = [];
    for (let i = 0; i < 25; i++) {
      // a few share a start, and a few are time-independent, so that every part of the keyset is crossed
      created.push(
        i % 7 === 0
          ? await createEvent(app, alice, timeIndependentBody({ title: `ti ${i}` }))
          : await hourAt(`2026-12-${String(1 + (i % 5)).padStart(2, '0')}T09:00:00Z`),
      );
    }
    const whole = await list('per_page=100');
    const { items, pages } = await allPages(app, alice.accessToken, '/events?per_page=10');
    expect(pages).toBe(3);
    expect(ids(items)).toEqual(ids(whole.json));
    expect(new Set(ids(items)).size).toBe(25);
    const first = await list('per_page=10');
    expect(first.link).toMatch(/^<http:\/\/127\.0\.0\.1:\d+\/v1\/events\?per_page=10&after=[A-Za-z0-9_.-]+>; rel="after"$/);
  });

  it('has no link on a last page that is exactly full', async () => {
    for (let i = 0; i < 4; i++) await hourAt(`2026-12-0${i + 1}T09:00:00Z`);
    const first = await list('per_page=2');
    const second = await list(`per_page=2&after=${afterCursor(first.link)}`);
    expect(second.json).toHaveLength(2);
    expect(second.link).toBeNull();
  });

  it('accepts per_page 1 and 100 and refuses 0 and 101', async () => {
    await hourAt('2026-12-01T09:00:00Z');
    await hourAt('2026-12-02T09:00:00Z');
    expect((await list('per_page=1')).json).toHaveLength(1);
    expect((await list('per_page=100')).json).toHaveLength(2);
    expect((await list('per_page=0')).status).toBe(400);
    expect((await list('per_page=101')).status).toBe(400);
  });

  it('refuses a tampered, truncated, foreign or malformed cursor with 400', async () => {
    for (let i = 0; i < 3; i++) await hourAt(`2026-12-0${i + 1}T09:00:00Z`);
    const cursor = afterCursor((await list('per_page=1')).link)!;
    expect((await list(`per_page=1&after=${cursor}`)).status).toBe(200);
    const [data, sig] = cursor.split('.') as [string, string];
    const payload = JSON.parse(Buffer.from(data, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...payload, s: '2020-01-01T00:00:00.000Z' })).toString('base64url');
    const flipped = `${data}.${sig.slice(0, -1)}${sig.endsWith('A') ? 'B' : 'A'}`;
    for (const bad of [`${forged}.${sig}`, flipped, data, 'garbage', `${cursor}.x`, '%00', 'a'.repeat(513)]) {
      const res = await list(`per_page=1&after=${bad}`);
      expect(res.status, bad).toBe(400);
      expect(res.json.code).toBe('validation_failed');
    }
  });
});

describe('cursors across instances', () => {
  it('are read by every instance sharing [http] cursor_secret and refused by one with another key', async () => {
    for (let i = 0; i < 3; i++) await hourAt(`2026-12-0${i + 1}T09:00:00Z`);
    const http = (secret: string) => ({ http: { host: '127.0.0.1', port: 0, cursor_secret: secret } });
    const [one, two, foreign] = await Promise.all([
      app.withConfig(http('s'.repeat(32))),
      app.withConfig(http('s'.repeat(32))),
      app.withConfig(http('t'.repeat(32))),
    ]);
    try {
      const first = await send(one, 'GET', '/events?per_page=1', { token: alice.accessToken });
      const cursor = afterCursor(first.link)!;
      const next = await send(two, 'GET', `/events?per_page=1&after=${cursor}`, { token: alice.accessToken });
      expect(next.status).toBe(200);
      expect(next.json[0].title).toBe('2026-12-02T09:00:00Z');
      expect((await send(foreign, 'GET', `/events?per_page=1&after=${cursor}`, { token: alice.accessToken })).status).toBe(400);
    } finally {
      await Promise.all([one.close(), two.close(), foreign.close()]);
    }
  });
  it('are read by every instance without a configured secret: the key is generated once in the database', async () => {
    for (let i = 0; i < 2; i++) await hourAt(`2026-12-0${i + 1}T09:00:00Z`);
    const [one, two] = await Promise.all([app.withConfig({}), app.withConfig({})]);
    try {
      const cursor = afterCursor((await send(one, 'GET', '/events?per_page=1', { token: alice.accessToken })).link)!;
      const next = await send(two, 'GET', `/events?per_page=1&after=${cursor}`, { token: alice.accessToken });
      expect(next.status).toBe(200);
      expect(next.json[0].title).toBe('2026-12-02T09:00:00Z');
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });
});

describe('get_events filters', () => {
  it('selects events overlapping [time_min, time_max], bounds included', async () => {
    const a = await hourAt('2026-12-01T09:00:00Z');
    const b = await hourAt('2026-12-05T09:00:00Z');
    const c = await hourAt('2026-12-10T09:00:00Z');
    await createEvent(app, alice, timeIndependentBody());
    const range = async (q: string) => ids((await list(q)).json);
    // a ends exactly at time_min; c starts exactly at time_max
    expect(await range('time_min=2026-12-01T10:00:00Z&time_max=2026-12-10T09:00:00Z')).toEqual([a.id, b.id, c.id]);
    expect(await range('time_min=2026-12-01T10:00:01Z&time_max=2026-12-10T08:59:59Z')).toEqual([b.id]);
    expect(await range('time_min=2026-12-05T09:30:00Z')).toEqual([b.id, c.id]);
    expect(await range('time_max=2026-12-05T09:00:00Z')).toEqual([a.id, b.id]);
    expect(await range('time_min=2026-12-05T09:30:00Z&time_max=2026-12-05T09:40:00Z')).toEqual([b.id]);
  });

  it('includes a recurring event while its series spans the range, an open-ended one always after its start', async () => {
    const weekly = await createEvent(app, alice, timedBody({ recurrence_pattern: ['RRULE:FREQ=WEEKLY;COUNT=5'] })); // Dec 1 … Dec 29 10:00
    const daily = await createEvent(
      app,
      alice,
      timedBody({ recurrence_pattern: ['RRULE:FREQ=DAILY'], starts_at: at('2027-01-01T09:00:00Z'), ends_at: at('2027-01-01T10:00:00Z') }),
    );
    const range = async (q: string) => ids((await list(q)).json);
    expect(await range('time_min=2026-12-20T00:00:00Z&time_max=2026-12-21T00:00:00Z')).toEqual([weekly.id]);
    expect(await range('time_min=2026-12-29T10:00:00Z&time_max=2026-12-30T00:00:00Z')).toEqual([weekly.id]);
    expect(await range('time_min=2026-12-29T10:00:01Z&time_max=2026-12-30T00:00:00Z')).toEqual([]);
    expect(await range('time_min=2040-01-01T00:00:00Z&time_max=2040-02-01T00:00:00Z')).toEqual([daily.id]);
    expect(await range('time_max=2026-12-31T00:00:00Z')).toEqual([weekly.id]);
  });

  it('includes a series in the range of a moved occurrence, also past its last end or before its first start', async () => {
    const weekly = await createEvent(app, alice, timedBody({ recurrence_pattern: ['RRULE:FREQ=WEEKLY;COUNT=5'] }), '?suppress_email_notification=true'); // Dec 1 … Dec 29
    const range = async (q: string) => ids((await list(q)).json);
    const move = async (id: string, start: string, end: string) => {
      const res = await send(app, 'PATCH', `/events/${weekly.id}/instances/${id}`, {
        token: alice.accessToken,
        body: { starts_at: at(start), ends_at: at(end) },
      });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
    };
    const january = 'time_min=2027-01-05T00:00:00Z&time_max=2027-01-06T00:00:00Z';
    const november = 'time_min=2026-11-20T00:00:00Z&time_max=2026-11-21T00:00:00Z';
    expect(await range(january)).toEqual([]);

    // the last occurrence moved past the series' end, the first before its start
    await move('20261229T090000Z', '2027-01-05T09:00:00Z', '2027-01-05T10:00:00Z');
    await move('20261201T090000Z', '2026-11-20T09:00:00Z', '2026-11-20T10:00:00Z');
    const withExceptions = [weekly.id, `${weekly.id}_20261201T090000Z`, `${weekly.id}_20261229T090000Z`];
    expect(await range(january)).toEqual(withExceptions);
    expect(await range(november)).toEqual(withExceptions);
    expect(await range('time_min=2027-01-05T10:00:00Z')).toEqual(withExceptions);
    expect(await range('time_min=2027-01-05T10:00:01Z')).toEqual([]);
    expect(await range('time_max=2026-11-20T09:00:00Z')).toEqual(withExceptions);
    expect(await range('time_max=2026-11-20T08:59:59Z')).toEqual([]);

    // a cancelled occurrence stays where it is, and so does the series' span
    await send(app, 'PATCH', `/events/${weekly.id}/instances/20261229T090000Z`, { token: alice.accessToken, body: { status: 'cancelled' } });
    expect(await range(january)).toEqual(withExceptions);

    // moved back into the series, it no longer reaches January
    await move('20261229T090000Z', '2026-12-29T09:00:00Z', '2026-12-29T10:00:00Z');
    expect(await range(january)).toEqual([]);
    expect(await range(november)).toEqual(withExceptions);
    // a changed start leaves the exceptions describing no occurrence; a changed pattern drops them
    const patch = (body: unknown) => send(app, 'PATCH', `/events/${weekly.id}?suppress_email_notification=true`, { token: alice.accessToken, body });
    expect((await patch({ starts_at: at('2026-12-01T09:30:00Z'), ends_at: at('2026-12-01T10:30:00Z') })).status).toBe(200);
    expect(await range(november)).toEqual([]);
    expect((await patch({ starts_at: at('2026-12-01T09:00:00Z'), ends_at: at('2026-12-01T10:00:00Z') })).status).toBe(200);
    expect(await range(november)).toEqual(withExceptions);
    expect((await patch({ recurrence_pattern: ['RRULE:FREQ=WEEKLY;COUNT=4'] })).status).toBe(200);
    expect(await range(november)).toEqual([]);

    // the single instance of a non-recurring event moves the event's span
    const single = await hourAt('2027-02-01T09:00:00Z');
    const moved = await send(app, 'PATCH', `/events/${single.id}/instances/20270201T090000Z`, {
      token: alice.accessToken,
      body: { starts_at: at('2027-02-03T09:00:00Z'), ends_at: at('2027-02-03T10:00:00Z') },
    });
    expect(moved.status).toBe(200);
    expect(await range('time_min=2027-02-03T00:00:00Z&time_max=2027-02-04T00:00:00Z')).toEqual([single.id]);
  });

  it("widens a series' span by every one of its occurrences moved at once", async () => {
    const weekly = await createEvent(app, alice, timedBody({ recurrence_pattern: ['RRULE:FREQ=WEEKLY;COUNT=8'] }), '?suppress_email_notification=true'); // Dec 1 … Jan 19
    const targets = ['2027-02-01', '2027-02-02', '2027-02-03', '2027-02-04', '2027-02-05', '2027-02-06'];
    const originals = ['20261201', '20261208', '20261215', '20261222', '20261229', '20270105'];
    const answers = await Promise.all(
      targets.map((day, i) =>
        send(app, 'PATCH', `/events/${weekly.id}/instances/${originals[i]}T090000Z`, {
          token: alice.accessToken,
          body: { starts_at: at(`${day}T09:00:00Z`), ends_at: at(`${day}T10:00:00Z`) },
        }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(targets.map(() => 200));
    // the latest of them decides: none may have written its span without seeing the others
    expect(ids((await list('time_min=2027-02-06T09:30:00Z')).json)[0]).toBe(weekly.id);
    expect(ids((await list('time_min=2027-02-06T10:00:01Z')).json)).toEqual([]);
  });

  it('pages a range through events of every reach from their start, and invitations, in one start order', async () => {
    const bob = await app.login('bob');
    const from = (start: string, end: string, extra: Record<string, unknown> = {}) =>
      createEvent(app, alice, timedBody({ title: start, starts_at: at(start), ends_at: at(end), ...extra }), '?suppress_email_notification=true');
    // the range: January 2027; each kind of event ends or starts near its edges
    const before = await from('2026-12-31T22:00:00Z', '2026-12-31T23:59:59Z');
    const acrossMin = await from('2026-12-31T23:00:00Z', '2027-01-01T01:00:00Z');
    const threeDays = await from('2026-12-29T12:00:00Z', '2027-01-01T12:00:00Z');
    const weekly = await from('2026-03-01T09:00:00Z', '2026-03-01T10:00:00Z', { recurrence_pattern: ['RRULE:FREQ=WEEKLY;COUNT=45'] }); // … Jan 3, 2027
    const endsBefore = await from('2026-03-02T09:00:00Z', '2026-03-02T10:00:00Z', { recurrence_pattern: ['RRULE:FREQ=WEEKLY;COUNT=40'] }); // … Nov 30
    const unbounded = await from('2020-06-01T09:00:00Z', '2020-06-01T10:00:00Z', { recurrence_pattern: ['RRULE:FREQ=MONTHLY'] });
    const twoYears = await from('2025-06-01T09:00:00Z', '2025-06-01T10:00:00Z', { recurrence_pattern: ['RRULE:FREQ=MONTHLY;COUNT=24'] }); // … May 2027
    const inside = await from('2027-01-15T09:00:00Z', '2027-01-15T10:00:00Z');
    const acrossMax = await from('2027-01-31T23:00:00Z', '2027-02-01T01:00:00Z');
    const after = await from('2027-02-01T00:00:01Z', '2027-02-01T01:00:00Z');
    const bobs = await createEvent(app, bob, timedBody({ starts_at: at('2027-01-10T09:00:00Z'), ends_at: at('2027-01-10T10:00:00Z') }));
    await invite(app, bobs.id, bob, alice, 'accepted');
    const bobsEarly = await createEvent(app, bob, timedBody({ starts_at: at('2026-12-31T23:30:00Z'), ends_at: at('2027-01-01T00:30:00Z') }));
    await invite(app, bobsEarly.id, bob, alice);
    const expected = [unbounded, twoYears, weekly, threeDays, acrossMin, bobsEarly, bobs, inside, acrossMax].map((e) => e.id);

    const range = 'time_min=2027-01-01T00:00:00Z&time_max=2027-02-01T00:00:00Z';
    expect(ids((await list(`${range}&per_page=100`)).json)).toEqual(expected);
    for (const perPage of [1, 2, 4]) {
      const { items, pages } = await allPages(app, alice.accessToken, `/events?${range}&per_page=${perPage}`);
      expect(ids(items)).toEqual(expected);
      expect(pages).toBe(Math.ceil(expected.length / perPage));
    }
    for (const outside of [before, endsBefore, after]) expect(expected).not.toContain(outside.id);
  });

  it('filters by favorites, adhoc, time_independent and invite_status', async () => {
    const bob = await app.login('bob');
    const plain = await hourAt('2026-12-01T09:00:00Z');
    const adhoc = await hourAt('2026-12-02T09:00:00Z', { is_adhoc: true });
    const ti = await createEvent(app, alice, timeIndependentBody());
    const bobs = await createEvent(app, bob, timedBody({ starts_at: at('2026-12-03T09:00:00Z'), ends_at: at('2026-12-03T10:00:00Z') }));
    await invite(app, bobs.id, bob, alice, 'declined');
    await send(app, 'PUT', `/users/me/event_favorites/${adhoc.id}`, { token: alice.accessToken });

    const q = async (query: string) => ids((await list(query)).json);
    expect(await q('')).toEqual([ti.id, plain.id, adhoc.id, bobs.id]);
    expect(await q('favorites=true')).toEqual([adhoc.id]);
    expect(await q('favorites=false')).toEqual([ti.id, plain.id, adhoc.id, bobs.id]);
    expect(await q('adhoc=true')).toEqual([adhoc.id]);
    expect(await q('adhoc=false')).toEqual([ti.id, plain.id, bobs.id]);
    expect(await q('time_independent=true')).toEqual([ti.id]);
    expect(await q('time_independent=false')).toEqual([plain.id, adhoc.id, bobs.id]);
    expect(await q('invite_status=declined')).toEqual([bobs.id]);
    expect(await q('invite_status=accepted,pending,tentative')).toEqual([ti.id, plain.id, adhoc.id]);
    expect((await list('invite_status=maybe')).status).toBe(400);
    expect((await list('adhoc=perhaps')).status).toBe(400);
    expect((await list('time_min=yesterday')).status).toBe(400);
  });

  it('carries up to invitees_max invitees per event, batched', async () => {
    const bob = await app.login('bob');
    const carol = await app.login('carol');
    const one = await hourAt('2026-12-01T09:00:00Z');
    const two = await hourAt('2026-12-02T09:00:00Z');
    await invite(app, one.id, alice, bob);
    await invite(app, two.id, alice, bob);
    await invite(app, two.id, alice, carol);
    const res = await list('invitees_max=1');
    const byId = new Map((res.json as Event[]).map((e) => [e.id, e]));
    expect(byId.get(one.id)).toMatchObject({ invitees: [expect.objectContaining({ status: 'pending' })], invitees_truncated: false });
    expect(byId.get(two.id)).toMatchObject({ invitees: [expect.anything()], invitees_truncated: true });
  });
});

describe('exceptions in get_events', () => {
  it('follows each recurring event with its exceptions, which do not count towards per_page', async () => {
    const weekly = await createEvent(app, alice, timedBody({ recurrence_pattern: ['RRULE:FREQ=WEEKLY;COUNT=5'] }));
    const later = await hourAt('2027-02-01T09:00:00Z');
    const moved = await send(app, 'PATCH', `/events/${weekly.id}/instances/20261215T090000Z`, {
      token: alice.accessToken,
      body: { title: 'Moved', starts_at: at('2026-12-15T13:00:00Z'), ends_at: at('2026-12-15T14:00:00Z') },
    });
    expect(moved.status).toBe(200);
    await send(app, 'PATCH', `/events/${weekly.id}/instances/20261208T090000Z`, { token: alice.accessToken, body: { status: 'cancelled' } });

    const res = await list('per_page=1');
    expect(res.json.map((i: any) => [i.type, i.id])).toEqual([
      ['recurring', weekly.id],
      ['exception', `${weekly.id}_20261208T090000Z`],
      ['exception', `${weekly.id}_20261215T090000Z`],
    ]);
    expect(res.json[1]).toMatchObject({ status: 'cancelled', recurring_event_id: weekly.id, original_starts_at: at('2026-12-08T09:00:00Z') });
    expect(res.json[2]).toMatchObject({
      title: 'Moved',
      status: 'ok',
      instance_id: '20261215T090000Z',
      starts_at: at('2026-12-15T13:00:00Z'),
      ends_at: at('2026-12-15T14:00:00Z'),
      original_starts_at: at('2026-12-15T09:00:00Z'),
      created_by: { id: alice.id },
    });
    const next = await list(`per_page=1&after=${afterCursor(res.link)}`);
    expect(ids(next.json)).toEqual([later.id]);
  });
});
