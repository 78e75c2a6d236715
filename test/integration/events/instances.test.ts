import { beforeEach, describe, expect, it } from 'vitest';
import { useTestApp, type TestUser } from '../../support/test-app.js';
import { afterCursor, allPages, at, createEvent, invite, send, timeIndependentBody, timedBody, type Event } from '../../support/events.js';

const app = useTestApp();
let alice: TestUser;
beforeEach(async () => {
  alice = await app.login('alice');
});

const instances = (event: Event, query = '') => send(app, 'GET', `/events/${event.id}/instances${query ? `?${query}` : ''}`, { token: alice.accessToken });
const instance = (event: Event, id: string) => send(app, 'GET', `/events/${event.id}/instances/${id}`, { token: alice.accessToken });
const patchInstance = (event: Event, id: string, body: unknown) =>
  send(app, 'PATCH', `/events/${event.id}/instances/${id}`, { token: alice.accessToken, body });
const weekly = (count = 5) =>
  createEvent(app, alice, timedBody({ recurrence_pattern: [`RRULE:FREQ=WEEKLY;COUNT=${count}`] }), '?suppress_email_notification=true');

/** The wall-clock time of an instant in Berlin, as HH:MM. */
const berlinTime = (iso: string) =>
  new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(new Date(iso));

describe('get_event_instances', () => {
  it('yields the single instance of a non-recurring event and none of a time-independent one', async () => {
    const single = await createEvent(app, alice);
    const res = await instances(single);
    expect(res.status).toBe(200);
    expect(res.json).toEqual([
      expect.objectContaining({
        id: `${single.id}_20261201T090000Z`,
        recurring_event_id: single.id,
        instance_id: '20261201T090000Z',
        type: 'instance',
        status: 'ok',
        title: single.title,
        starts_at: at('2026-12-01T09:00:00Z'),
        ends_at: at('2026-12-01T10:00:00Z'),
        room: single.room,
        invite_status: 'accepted',
        can_edit: true,
      }),
    ]);
    expect(res.link).toBeNull();
    const ti = await createEvent(app, alice, timeIndependentBody());
    expect((await instances(ti)).json).toEqual([]);
  });

  it('keeps a 10:00 Berlin meeting at 10:00 local across both daylight-saving changes', async () => {
    const spring = await createEvent(
      app,
      alice,
      timedBody({
        starts_at: at('2026-03-19T09:00:00Z'),
        ends_at: at('2026-03-19T10:00:00Z'),
        recurrence_pattern: ['RRULE:FREQ=WEEKLY;COUNT=4'],
      }),
    );
    const starts = (await instances(spring)).json.map((i: any) => i.starts_at.datetime);
    expect(starts).toEqual(['2026-03-19T09:00:00Z', '2026-03-26T09:00:00Z', '2026-04-02T08:00:00Z', '2026-04-09T08:00:00Z']);
    expect(starts.map(berlinTime)).toEqual(['10:00', '10:00', '10:00', '10:00']);

    const autumn = await createEvent(
      app,
      alice,
      timedBody({
        starts_at: at('2026-10-15T08:00:00Z'),
        ends_at: at('2026-10-15T09:00:00Z'),
        recurrence_pattern: ['RRULE:FREQ=WEEKLY;COUNT=3'],
      }),
    );
    const list = (await instances(autumn)).json;
    expect(list.map((i: any) => i.instance_id)).toEqual(['20261015T080000Z', '20261022T080000Z', '20261029T090000Z']);
    expect(list.map((i: any) => berlinTime(i.ends_at.datetime))).toEqual(['11:00', '11:00', '11:00']);
  });

  it('expands an all-day series day by day at 00:00 UTC', async () => {
    const allDay = await createEvent(
      app,
      alice,
      timedBody({
        is_all_day: true,
        starts_at: at('2026-12-24T00:00:00Z'),
        ends_at: at('2026-12-25T00:00:00Z'),
        recurrence_pattern: ['RRULE:FREQ=DAILY;COUNT=3'],
      }),
    );
    const list = (await instances(allDay)).json;
    expect(list.map((i: any) => [i.starts_at.datetime, i.ends_at.datetime, i.is_all_day])).toEqual([
      ['2026-12-24T00:00:00Z', '2026-12-25T00:00:00Z', true],
      ['2026-12-25T00:00:00Z', '2026-12-26T00:00:00Z', true],
      ['2026-12-26T00:00:00Z', '2026-12-27T00:00:00Z', true],
    ]);
  });

  it('pages with a cursor named cursor or after, linking while more occurrences follow', async () => {
    const event = await weekly(5);
    const { items, pages } = await allPages(app, alice.accessToken, `/events/${event.id}/instances?per_page=2`);
    expect(pages).toBe(3);
    expect(items.map((i) => i.instance_id)).toEqual(['20261201T090000Z', '20261208T090000Z', '20261215T090000Z', '20261222T090000Z', '20261229T090000Z']);

    const first = await instances(event, 'per_page=2');
    expect(first.link).toMatch(new RegExp(`^<http://127\\.0\\.0\\.1:\\d+/v1/events/${event.id}/instances\\?per_page=2&after=[A-Za-z0-9_.-]+>; rel="after"$`));
    const cursor = afterCursor(first.link)!;
    const viaCursor = await instances(event, `per_page=2&cursor=${cursor}`);
    expect(viaCursor.json.map((i: any) => i.instance_id)).toEqual(['20261215T090000Z', '20261222T090000Z']);
    // the next link names the cursor once, as after
    expect(viaCursor.link).not.toContain('cursor=');
    expect((await instances(event, `per_page=2&cursor=${cursor}&after=${cursor}`)).status).toBe(200);
    const both = await instances(event, `per_page=2&cursor=${cursor}&after=${afterCursor(viaCursor.link)}`);
    expect(both.status).toBe(400);
  });

  it('has no link on an exactly full last page', async () => {
    const event = await weekly(4);
    const second = await instances(event, `per_page=2&after=${afterCursor((await instances(event, 'per_page=2')).link)}`);
    expect(second.json).toHaveLength(2);
    expect(second.link).toBeNull();
  });

  it('refuses a tampered cursor, one of another event and one of the event list', async () => {
    const event = await weekly(5);
    const other = await weekly(5);
    const cursor = afterCursor((await instances(event, 'per_page=1')).link)!;
    const [data, sig] = cursor.split('.') as [string, string];
    const payload = JSON.parse(Buffer.from(data, 'base64url').toString());
    const forged = `${Buffer.from(JSON.stringify({ ...payload, a: '2026-12-15T09:00:00.000Z' })).toString('base64url')}.${sig}`;
    for (const q of [`cursor=${forged}`, `after=${data}`, `cursor=x.y`]) {
      const res = await instances(event, q);
      expect(res.status, q).toBe(400);
      expect(res.json.code).toBe('validation_failed');
    }
    expect((await instances(other, `after=${cursor}`)).status).toBe(400);
    await createEvent(app, alice);
    const listCursor = afterCursor((await send(app, 'GET', '/events?per_page=1', { token: alice.accessToken })).link)!;
    expect((await instances(event, `after=${listCursor}`)).status).toBe(400);
  });

  it('skips occurrences ending before time_min and stops at those starting after time_max', async () => {
    const event = await createEvent(app, alice, timedBody({ recurrence_pattern: ['RRULE:FREQ=DAILY;COUNT=10'] }));
    const ids = async (q: string) => (await instances(event, q)).json.map((i: any) => i.instance_id);
    expect(await ids('time_min=2026-12-03T10:00:00Z&time_max=2026-12-05T09:00:00Z')).toEqual(['20261203T090000Z', '20261204T090000Z', '20261205T090000Z']);
    expect(await ids('time_min=2026-12-03T10:00:01Z&time_max=2026-12-05T08:59:59Z')).toEqual(['20261204T090000Z']);
    expect(await ids('time_min=2026-12-09T09:30:00Z')).toEqual(['20261209T090000Z', '20261210T090000Z']);
  });

  it('accepts per_page 1 and 100 and refuses 0 and 101', async () => {
    const event = await createEvent(app, alice, timedBody({ recurrence_pattern: ['RRULE:FREQ=DAILY'] }));
    expect((await instances(event, 'per_page=1')).json).toHaveLength(1);
    expect((await instances(event, 'per_page=100')).json).toHaveLength(100);
    expect((await instances(event, 'per_page=0')).status).toBe(400);
    expect((await instances(event, 'per_page=101')).status).toBe(400);
  });

  it('carries invitees_max invitees on every instance', async () => {
    const bob = await app.login('bob');
    const event = await weekly(2);
    await invite(app, event.id, alice, bob, 'accepted');
    const list = (await instances(event, 'invitees_max=5')).json;
    for (const i of list) expect(i).toMatchObject({ invitees: [expect.objectContaining({ status: 'accepted' })], invitees_truncated: false });
  });
});

describe('get_event_instances: time ranges apply where an occurrence is', () => {
  const move = async (event: Event, id: string, start: string, end: string) => {
    const res = await patchInstance(event, id, { starts_at: at(start), ends_at: at(end) });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
  };
  const listed = async (event: Event, q: string) =>
    (await instances(event, q)).json.map((i: any) => `${i.instance_id}@${i.starts_at.datetime}${i.status === 'cancelled' ? ' cancelled' : ''}`);

  it('finds a moved occurrence around its new time, not at its old slot, bounds included', async () => {
    const event = await weekly(5); // Dec 1 … Dec 29, 09:00–10:00 UTC
    await move(event, '20261208T090000Z', '2026-12-10T13:00:00Z', '2026-12-10T14:00:00Z');
    expect(await listed(event, 'time_min=2026-12-10T00:00:00Z&time_max=2026-12-11T00:00:00Z')).toEqual(['20261208T090000Z@2026-12-10T13:00:00Z']);
    expect(await listed(event, 'time_min=2026-12-08T00:00:00Z&time_max=2026-12-09T00:00:00Z')).toEqual([]);
    // its end at time_min and its start at time_max still count; a second beyond either does not
    expect(await listed(event, 'time_min=2026-12-10T14:00:00Z&time_max=2026-12-10T20:00:00Z')).toEqual(['20261208T090000Z@2026-12-10T13:00:00Z']);
    expect(await listed(event, 'time_min=2026-12-10T14:00:01Z&time_max=2026-12-11T00:00:00Z')).toEqual([]);
    expect(await listed(event, 'time_min=2026-12-09T00:00:00Z&time_max=2026-12-10T13:00:00Z')).toEqual(['20261208T090000Z@2026-12-10T13:00:00Z']);
    expect(await listed(event, 'time_min=2026-12-09T00:00:00Z&time_max=2026-12-10T12:59:59Z')).toEqual([]);
    // one bound only
    expect(await listed(event, 'time_max=2026-12-09T00:00:00Z')).toEqual(['20261201T090000Z@2026-12-01T09:00:00Z']);
    expect(await listed(event, 'time_min=2026-12-09T00:00:00Z&per_page=2')).toEqual([
      '20261208T090000Z@2026-12-10T13:00:00Z',
      '20261215T090000Z@2026-12-15T09:00:00Z',
    ]);
  });

  it('lists occurrences by where they are and pages through moved ones without gaps or repeats', async () => {
    const event = await weekly(5);
    await move(event, '20261208T090000Z', '2026-12-20T09:00:00Z', '2026-12-20T10:00:00Z'); // past Dec 15
    await move(event, '20261229T090000Z', '2026-11-24T09:00:00Z', '2026-11-24T10:00:00Z'); // before the series' start
    await move(event, '20261222T090000Z', '2026-12-15T09:00:00Z', '2026-12-15T10:00:00Z'); // onto Dec 15's slot
    const everything = [
      '20261229T090000Z@2026-11-24T09:00:00Z',
      '20261201T090000Z@2026-12-01T09:00:00Z',
      '20261215T090000Z@2026-12-15T09:00:00Z',
      '20261222T090000Z@2026-12-15T09:00:00Z',
      '20261208T090000Z@2026-12-20T09:00:00Z',
    ];
    expect(await listed(event, '')).toEqual(everything);
    for (const perPage of [1, 2, 3]) {
      const { items, pages } = await allPages(app, alice.accessToken, `/events/${event.id}/instances?per_page=${perPage}`);
      expect(
        items.map((i) => `${i.instance_id}@${i.starts_at.datetime}`),
        `per_page=${perPage}`,
      ).toEqual(everything);
      expect(pages).toBe(Math.ceil(5 / perPage));
    }
    const range = 'time_min=2026-12-14T00:00:00Z&time_max=2026-12-21T00:00:00Z';
    const { items } = await allPages(app, alice.accessToken, `/events/${event.id}/instances?per_page=1&${range}`);
    expect(items.map((i) => `${i.instance_id}@${i.starts_at.datetime}`)).toEqual(everything.slice(2));
    expect(await listed(event, 'time_max=2026-11-30T00:00:00Z')).toEqual(['20261229T090000Z@2026-11-24T09:00:00Z']);
  });

  it('keeps a cancelled occurrence where it is, with status cancelled', async () => {
    const event = await weekly(3);
    await move(event, '20261208T090000Z', '2026-12-10T13:00:00Z', '2026-12-10T14:00:00Z');
    await patchInstance(event, '20261208T090000Z', { status: 'cancelled' });
    await patchInstance(event, '20261215T090000Z', { status: 'cancelled' });
    expect(await listed(event, 'time_min=2026-12-10T00:00:00Z&time_max=2026-12-11T00:00:00Z')).toEqual(['20261208T090000Z@2026-12-10T13:00:00Z cancelled']);
    expect(await listed(event, 'time_min=2026-12-08T00:00:00Z&time_max=2026-12-09T00:00:00Z')).toEqual([]);
    expect(await listed(event, 'time_min=2026-12-15T00:00:00Z')).toEqual(['20261215T090000Z@2026-12-15T09:00:00Z cancelled']);
  });

  it('leaves out moved occurrences that a changed start of the event no longer produces', async () => {
    const event = await weekly(3);
    await move(event, '20261208T090000Z', '2026-12-10T13:00:00Z', '2026-12-10T14:00:00Z');
    await move(event, '20261215T090000Z', '2026-12-16T13:00:00Z', '2026-12-16T14:00:00Z');
    const patched = await send(app, 'PATCH', `/events/${event.id}?suppress_email_notification=true`, {
      token: alice.accessToken,
      body: { starts_at: at('2026-12-01T09:30:00Z'), ends_at: at('2026-12-01T10:30:00Z') },
    });
    expect(patched.status).toBe(200);
    const now = ['20261201T093000Z@2026-12-01T09:30:00Z', '20261208T093000Z@2026-12-08T09:30:00Z', '20261215T093000Z@2026-12-15T09:30:00Z'];
    expect(await listed(event, '')).toEqual(now);
    const { items } = await allPages(app, alice.accessToken, `/events/${event.id}/instances?per_page=1`);
    expect(items.map((i) => `${i.instance_id}@${i.starts_at.datetime}`)).toEqual(now);
    expect(await listed(event, 'time_min=2026-12-10T00:00:00Z&time_max=2026-12-11T00:00:00Z')).toEqual([]);
  });

  it('moves the single instance of a non-recurring event too', async () => {
    const single = await createEvent(app, alice);
    await move(single, '20261201T090000Z', '2026-12-03T09:00:00Z', '2026-12-03T10:00:00Z');
    expect(await listed(single, 'time_min=2026-12-03T00:00:00Z&time_max=2026-12-04T00:00:00Z')).toEqual(['20261201T090000Z@2026-12-03T09:00:00Z']);
    expect(await listed(single, 'time_min=2026-12-01T00:00:00Z&time_max=2026-12-02T00:00:00Z')).toEqual([]);
  });
});

describe('get_event_instance', () => {
  it('answers an occurrence, and 404 for a start that is none', async () => {
    const event = await createEvent(app, alice, timedBody({ recurrence_pattern: ['RRULE:FREQ=WEEKLY;COUNT=5', 'EXDATE:20261215T090000Z'] }));
    const res = await instance(event, '20261208T090000Z');
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ id: `${event.id}_20261208T090000Z`, starts_at: at('2026-12-08T09:00:00Z'), type: 'instance' });
    for (const id of ['20261209T090000Z', '20261215T090000Z', '20270105T090000Z', '20261340T090000Z', '20261208T090001Z']) {
      expect((await instance(event, id)).status, id).toBe(404);
    }
    expect((await instance(event, '2026-12-08')).status).toBe(400);
    const ti = await createEvent(app, alice, timeIndependentBody());
    expect((await instance(ti, '20261208T090000Z')).status).toBe(404);
  });

  it('ends a series with the last occurrence that ends within the year 9999 in UTC', async () => {
    // daily at 23:30 for an hour, and an RDATE on the last second of 9999: answers could not write their ends
    const event = await createEvent(
      app,
      alice,
      timedBody({
        starts_at: at('9999-12-29T23:30:00Z'),
        ends_at: at('9999-12-30T00:30:00Z'),
        recurrence_pattern: ['RRULE:FREQ=DAILY', 'RDATE:99991231T235959Z'],
      }),
    );
    const list = await instances(event);
    expect(list.json.map((i: { instance_id: string }) => i.instance_id)).toEqual(['99991229T233000Z', '99991230T233000Z']);
    for (const id of ['99991231T233000Z', '99991231T235959Z']) expect((await instance(event, id)).status, id).toBe(404);
  });
});

describe('patch_event_instance', () => {
  it('moves and renames one occurrence, keeping its instance id, and shows it in the list', async () => {
    const event = await weekly(3);
    const res = await patchInstance(event, '20261208T090000Z', {
      title: 'Moved',
      description: 'Later this time',
      starts_at: at('2026-12-08T13:00:00Z'),
      ends_at: at('2026-12-08T14:30:00Z'),
    });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      id: `${event.id}_20261208T090000Z`,
      instance_id: '20261208T090000Z',
      title: 'Moved',
      description: 'Later this time',
      starts_at: at('2026-12-08T13:00:00Z'),
      ends_at: at('2026-12-08T14:30:00Z'),
      status: 'ok',
    });
    const list = (await instances(event)).json;
    expect(list.map((i: any) => [i.instance_id, i.title, i.starts_at.datetime])).toEqual([
      ['20261201T090000Z', event.title, '2026-12-01T09:00:00Z'],
      ['20261208T090000Z', 'Moved', '2026-12-08T13:00:00Z'],
      ['20261215T090000Z', event.title, '2026-12-15T09:00:00Z'],
    ]);
  });

  it('cancels and restores an occurrence, keeping earlier changes', async () => {
    const event = await weekly(3);
    await patchInstance(event, '20261215T090000Z', { title: 'Special' });
    const cancelled = await patchInstance(event, '20261215T090000Z', { status: 'cancelled' });
    expect(cancelled.json).toMatchObject({ status: 'cancelled', title: 'Special' });
    expect((await instance(event, '20261215T090000Z')).json.status).toBe('cancelled');
    const restored = await patchInstance(event, '20261215T090000Z', { status: 'ok' });
    expect(restored.json).toMatchObject({ status: 'ok', title: 'Special' });
  });

  it('moving only the start keeps the duration', async () => {
    const event = await weekly(2);
    const res = await patchInstance(event, '20261201T090000Z', { starts_at: at('2026-12-01T15:00:00Z') });
    expect(res.json.ends_at).toEqual(at('2026-12-01T16:00:00Z'));
  });

  it('applies the time checks of create', async () => {
    const event = await weekly(2);
    const before = await patchInstance(event, '20261201T090000Z', { ends_at: at('2026-12-01T08:00:00Z') });
    expect(before.status).toBe(400);
    expect(before.json.code).toBe('invalid_event');
    const allDay = await patchInstance(event, '20261201T090000Z', { is_all_day: true });
    expect(allDay.json.code).toBe('invalid_event');
    const zone = await patchInstance(event, '20261201T090000Z', { starts_at: at('2026-12-01T09:00:00Z', 'Mars/Olympus') });
    expect(zone.json.code).toBe('validation_failed');
    // its end is the start plus the hour the event lasts: in the year 10000
    const late = await patchInstance(event, '20261201T090000Z', { starts_at: at('9999-12-31T23:30:00Z') });
    expect(late.json).toMatchObject({ code: 'invalid_event', message: 'an occurrence must end by 9999-12-31T23:59:59.999Z' });
    expect((await patchInstance(event, '20261201T090000Z', { status: 'maybe' })).status).toBe(400);
  });

  it.each([
    ['title', 255],
    ['description', 4096],
  ])('accepts a %s of %i characters and refuses one more', async (field, max) => {
    const event = await weekly(2);
    expect((await patchInstance(event, '20261201T090000Z', { [field]: 'x'.repeat(max) })).status).toBe(200);
    const res = await patchInstance(event, '20261201T090000Z', { [field]: 'x'.repeat(max + 1) });
    expect(res.status).toBe(400);
    expect(res.json.errors).toContainEqual(expect.objectContaining({ field, code: 'invalid_length' }));
  });

  it('refuses an empty body, one with only unknown fields, and a start that is no occurrence', async () => {
    const event = await weekly(2);
    expect((await patchInstance(event, '20261201T090000Z', {})).status).toBe(400);
    expect((await patchInstance(event, '20261201T090000Z', { colour: 'red' })).status).toBe(400);
    const raw = await send(app, 'PATCH', `/events/${event.id}/instances/20261201T090000Z`, { token: alice.accessToken, raw: '{"status":' });
    expect(raw.json.code).toBe('invalid_json');
    expect((await patchInstance(event, '20261202T090000Z', { status: 'cancelled' })).status).toBe(404);
    expect(await app.convene.database.db.selectFrom('event_exceptions').select('event_id').execute()).toEqual([]);
  });

  it('queues an update mail', async () => {
    const event = await weekly(2);
    await patchInstance(event, '20261201T090000Z', { status: 'cancelled' });
    const mails = await app.convene.database.db.selectFrom('email_outbox').select(['kind', 'event_id']).execute();
    expect(mails).toEqual([{ kind: 'updated', event_id: event.id }]);
  });
});
