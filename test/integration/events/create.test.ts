import { beforeEach, describe, expect, it } from 'vitest';
import { useTestApp, type TestUser } from '../../support/test-app.js';
import { at, createEvent, send, timeIndependentBody, timedBody } from '../../support/events.js';

const CALL_IN = { tel: '+49 30 1234567', uri: 'sip:call-in@example.org' };

const app = useTestApp({ call_in: CALL_IN });
let alice: TestUser;
beforeEach(async () => {
  alice = await app.login('alice');
});

const post = (body: unknown, query = '') => send(app, 'POST', `/events${query}`, { token: alice.accessToken, body });
const db = () => app.convene.database.db;

/** An EXDATE line of exactly 1024 characters: 12 + 20 (zone) + 1 + 62 dates of 15 characters and 61 commas. */
function exdateLine(extra = 0): string {
  const dates = Array.from({ length: 62 }, (_, i) => `2027${String(1 + Math.floor(i / 28)).padStart(2, '0')}${String(1 + (i % 28)).padStart(2, '0')}T100000`);
  const line = `EXDATE;TZID=America/Indiana/Knox:${dates.join(',')}`;
  return extra > 0 ? `${line},${'2'.repeat(extra - 1)}` : line;
}

describe('create_event', () => {
  it('creates a timed event with its own room, SIP config and call-in details', async () => {
    const event = await createEvent(app, alice, timedBody({ password: 'v3ry-secret', waiting_room: true }));
    expect(event).toMatchObject({
      title: 'Weekly planning',
      description: 'Plans for the coming week.',
      is_time_independent: false,
      is_all_day: false,
      starts_at: at('2026-12-01T09:00:00Z'),
      ends_at: at('2026-12-01T10:00:00Z'),
      recurrence_pattern: [],
      is_adhoc: false,
      type: 'single',
      status: 'ok',
      invite_status: 'accepted',
      is_favorite: false,
      can_edit: true,
      invitees: [],
      invitees_truncated: false,
      created_by: { id: alice.id, email: alice.email },
      updated_by: { id: alice.id },
    });
    const room = await db().selectFrom('rooms').selectAll().where('id', '=', event.room.id).executeTakeFirstOrThrow();
    expect(room).toMatchObject({ created_by: alice.id, password: 'v3ry-secret', waiting_room: true });
    const sip = await db().selectFrom('sip_configs').selectAll().where('room_id', '=', room.id).executeTakeFirstOrThrow();
    expect(event.room).toEqual({
      id: room.id,
      password: 'v3ry-secret',
      waiting_room: true,
      call_in: { ...CALL_IN, id: sip.sip_id, password: sip.password },
    });
    const row = await db().selectFrom('events').selectAll().where('id', '=', event.id).executeTakeFirstOrThrow();
    // a single event's span ends with it
    expect(row).toMatchObject({ duration_secs: 3600, range_end: new Date('2026-12-01T10:00:00Z'), starts_at_tz: 'Europe/Berlin' });
  });

  it('creates a time-independent event without times, and a room without password', async () => {
    const event = await createEvent(app, alice, timeIndependentBody({ is_adhoc: true, recurrence_pattern: [] }));
    expect(event).toMatchObject({ is_time_independent: true, is_adhoc: true, type: 'single', recurrence_pattern: [] });
    expect(event).not.toHaveProperty('starts_at');
    expect(event).not.toHaveProperty('is_all_day');
    expect(event.room).not.toHaveProperty('password');
    expect(event.room.waiting_room).toBe(false);
  });

  it('omits call_in when no [call_in] tel is configured, and uri when only tel is', async () => {
    const plain = await app.withConfig({ call_in: {} });
    const telOnly = await app.withConfig({ call_in: { tel: '+49 30 7654321' } });
    try {
      const none = await send(plain, 'POST', '/events', { token: alice.accessToken, body: timedBody() });
      expect(none.status).toBe(201);
      expect(none.json.room).not.toHaveProperty('call_in');
      const tel = await send(telOnly, 'POST', '/events', { token: alice.accessToken, body: timedBody() });
      expect(tel.json.room.call_in).toEqual({ tel: '+49 30 7654321', id: expect.stringMatching(/^\d{10}$/), password: expect.stringMatching(/^\d{10}$/) });
    } finally {
      await plain.close();
      await telOnly.close();
    }
  });

  it('creates a recurring event whose span ends with its last occurrence', async () => {
    const event = await createEvent(app, alice, timedBody({ recurrence_pattern: ['RRULE:FREQ=WEEKLY;COUNT=3'] }));
    expect(event).toMatchObject({ type: 'recurring', recurrence_pattern: ['RRULE:FREQ=WEEKLY;COUNT=3'] });
    const row = await db().selectFrom('events').select('range_end').where('id', '=', event.id).executeTakeFirstOrThrow();
    expect(row.range_end).toEqual(new Date('2026-12-15T10:00:00Z'));
    const unbounded = await createEvent(app, alice, timedBody({ recurrence_pattern: ['RRULE:FREQ=DAILY'] }));
    const open = await db().selectFrom('events').select('range_end').where('id', '=', unbounded.id).executeTakeFirstOrThrow();
    expect(open.range_end).toBeNull();
  });

  it('accepts an all-day event at 00:00 UTC and refuses one at another time', async () => {
    const ok = await post(timedBody({ is_all_day: true, starts_at: at('2026-12-01T00:00:00Z'), ends_at: at('2026-12-02T00:00:00Z') }));
    expect(ok.status).toBe(201);
    expect(ok.json.is_all_day).toBe(true);
    const bad = await post(timedBody({ is_all_day: true, starts_at: at('2026-12-01T09:00:00Z'), ends_at: at('2026-12-02T00:00:00Z') }));
    expect(bad.status).toBe(400);
    expect(bad.json.code).toBe('invalid_event');
  });

  it('refuses ends_at before starts_at and accepts equal times', async () => {
    const before = await post(timedBody({ ends_at: at('2026-12-01T08:59:59Z') }));
    expect(before.status).toBe(400);
    expect(before.json.code).toBe('invalid_event');
    expect((await post(timedBody({ ends_at: at('2026-12-01T09:00:00Z') }))).status).toBe(201);
  });

  it('refuses time fields on a time-independent event and missing ones on a timed event', async () => {
    const tiWithTimes = await post(timeIndependentBody({ starts_at: at('2026-12-01T09:00:00Z') }));
    expect(tiWithTimes.status).toBe(400);
    expect(tiWithTimes.json.code).toBe('validation_failed');
    const tiWithRule = await post(timeIndependentBody({ recurrence_pattern: ['RRULE:FREQ=DAILY'] }));
    expect(tiWithRule.status).toBe(400);
    const { ends_at: _ends, ...noEnd } = timedBody();
    const missing = await post(noEnd);
    expect(missing.status).toBe(400);
    expect(missing.json.errors).toContainEqual(expect.objectContaining({ field: 'ends_at', code: 'value_required' }));
  });

  it('refuses an unknown time zone and a malformed date-time', async () => {
    const zone = await post(timedBody({ starts_at: at('2026-12-01T09:00:00Z', 'Europe/Nowhere') }));
    expect(zone.status).toBe(400);
    expect(zone.json.errors).toContainEqual(expect.objectContaining({ field: 'starts_at.timezone' }));
    const date = await post(timedBody({ starts_at: at('2026-12-01 09:00') }));
    expect(date.status).toBe(400);
    expect(date.json.code).toBe('validation_failed');
  });

  it('refuses times outside the years 0000 to 9999 in UTC, which answers could not write', async () => {
    // valid RFC 3339 (and once stored), but the year 10000 or -1 in UTC
    for (const [field, datetime] of [
      ['ends_at', '9999-12-31T23:59:59-00:01'],
      ['starts_at', '0000-01-01T00:00:00+00:01'],
    ] as const) {
      const res = await post(timedBody({ starts_at: at('9999-12-31T22:00:00Z'), ends_at: at('9999-12-31T23:00:00Z'), [field]: at(datetime) }));
      expect(res.status, datetime).toBe(400);
      expect(res.json.errors).toEqual([{ field: `${field}.datetime`, code: 'invalid_date_time', message: 'outside the years 0000 to 9999 in UTC' }]);
    }
    const first = await post(timedBody({ starts_at: at('0000-01-01T00:00:00Z'), ends_at: at('0000-01-01T01:00:00Z') }));
    expect(first.json).toMatchObject({ starts_at: at('0000-01-01T00:00:00Z') });
    const last = await post(timedBody({ starts_at: at('9999-12-31T23:00:00Z'), ends_at: at('9999-12-31T23:59:59.999Z') }));
    expect(last.json).toMatchObject({ ends_at: at('9999-12-31T23:59:59.999Z') });
  });

  it('accepts an event of 2^31 - 1 seconds and refuses a second more (duration_secs; once a 500)', async () => {
    const start = Date.parse('2030-01-01T00:00:00Z');
    const endAfter = (seconds: number) => at(new Date(start + seconds * 1000).toISOString());
    const longest = await post(timedBody({ starts_at: at('2030-01-01T00:00:00Z'), ends_at: endAfter(2 ** 31 - 1) }));
    expect(longest.status).toBe(201);
    const longer = await post(timedBody({ starts_at: at('2030-01-01T00:00:00Z'), ends_at: endAfter(2 ** 31) }));
    expect(longer.json).toMatchObject({ code: 'invalid_event', message: 'an event must not last longer than 2147483647 seconds (68 years)' });
  });

  it.each([
    ['title', 255],
    ['description', 4096],
  ])('accepts a %s of %i characters and refuses one more', async (field, max) => {
    const ok = await post(timedBody({ [field]: 'x'.repeat(max) }));
    expect(ok.status).toBe(201);
    expect(ok.json[field]).toHaveLength(max);
    const tooLong = await post(timedBody({ [field]: 'x'.repeat(max + 1) }));
    expect(tooLong.status).toBe(400);
    expect(tooLong.json.errors).toContainEqual(expect.objectContaining({ field, code: 'invalid_length' }));
  });

  it('accepts passwords of 1 and 255 characters and refuses 0 and 256', async () => {
    for (const length of [1, 255]) {
      const ok = await post(timedBody({ password: 'p'.repeat(length) }));
      expect(ok.status).toBe(201);
      expect(ok.json.room.password).toHaveLength(length);
    }
    for (const length of [0, 256]) {
      const bad = await post(timedBody({ password: 'p'.repeat(length) }));
      expect(bad.status).toBe(400);
      expect(bad.json.errors).toContainEqual(expect.objectContaining({ field: 'password', code: 'invalid_length' }));
    }
  });

  it('accepts 4 recurrence lines and refuses 5', async () => {
    const lines = ['RRULE:FREQ=WEEKLY;COUNT=10', 'EXDATE:20261208T090000Z', 'EXDATE:20261215T090000Z', 'RDATE:20261203T090000Z'];
    expect((await post(timedBody({ recurrence_pattern: lines }))).status).toBe(201);
    const five = await post(timedBody({ recurrence_pattern: [...lines, 'EXDATE:20261222T090000Z'] }));
    expect(five.status).toBe(400);
    expect(five.json.errors).toContainEqual(expect.objectContaining({ field: 'recurrence_pattern', code: 'too_many_items' }));
  });

  it('accepts a recurrence line of 1024 characters and refuses 1025', async () => {
    expect(exdateLine()).toHaveLength(1024);
    const ok = await post(timedBody({ recurrence_pattern: ['RRULE:FREQ=WEEKLY', exdateLine()] }));
    expect(ok.status, JSON.stringify(ok.json)).toBe(201);
    const long = exdateLine(1);
    expect(long).toHaveLength(1025);
    const bad = await post(timedBody({ recurrence_pattern: ['RRULE:FREQ=WEEKLY', long] }));
    expect(bad.status).toBe(400);
    expect(bad.json.errors).toContainEqual(expect.objectContaining({ field: 'recurrence_pattern.1', code: 'invalid_length' }));
  });

  it.each([
    ['a frequency finer than daily', 'RRULE:FREQ=HOURLY;COUNT=3'],
    ['an unknown frequency', 'RRULE:FREQ=FORTNIGHTLY'],
    ['a rule without FREQ', 'RRULE:COUNT=3'],
    ['a rule with no occurrence', 'RRULE:FREQ=DAILY;UNTIL=20200101T000000Z'],
    ['a COUNT of 0', 'RRULE:FREQ=DAILY;COUNT=0'],
    ['a garbled date list', 'EXDATE:not-a-date'],
    ['an unknown rule part', 'RRULE:FREQ=DAILY;BYWHATEVER=1'],
  ])('refuses %s with invalid_event', async (_name, line) => {
    const res = await post(timedBody({ recurrence_pattern: [line] }));
    expect(res.status, JSON.stringify(res.json)).toBe(400);
    expect(res.json.code).toBe('invalid_event');
  });

  it('refuses a line that is no recurrence property', async () => {
    const res = await post(timedBody({ recurrence_pattern: ['DTSTART:20261201T090000Z'] }));
    expect(res.status).toBe(400);
    expect(res.json.code).toBe('validation_failed');
  });

  it('refuses malformed JSON, a non-object body and anonymous callers', async () => {
    const raw = await send(app, 'POST', '/events', { token: alice.accessToken, raw: '{"title": ' });
    expect(raw.status).toBe(400);
    expect(raw.json.code).toBe('invalid_json');
    expect((await post([timedBody()])).status).toBe(400);
    const text = await app.request('POST', '/v1/events', {
      headers: { authorization: `Bearer ${alice.accessToken}`, 'content-type': 'text/plain' },
      body: JSON.stringify(timedBody()),
    });
    expect(text.status).toBe(415);
    expect((await send(app, 'POST', '/events', { body: timedBody() })).status).toBe(401);
  });

  it('ignores unknown fields', async () => {
    const res = await post(timedBody({ e2e_encryption: true, streaming_targets: [] }));
    expect(res.status).toBe(201);
    expect(res.json).not.toHaveProperty('e2e_encryption');
  });

  it('queues the creation mail in the same transaction unless suppressed', async () => {
    const mailed = await createEvent(app, alice);
    const quiet = await createEvent(app, alice, timedBody(), '?suppress_email_notification=true');
    const rows = await db().selectFrom('email_outbox').select(['event_id', 'kind', 'recipients']).execute();
    expect(rows).toEqual([{ event_id: mailed.id, kind: 'created', recipients: [alice.email] }]);
    expect(rows.some((r) => r.event_id === quiet.id)).toBe(false);
  });
});
