/**
 * The calendar feed (issue 20): its URL issued, rotated and revoked through the API, only a hash of
 * its secret stored; the feed itself read by two independent parsers (ical.js and node-ical), whose
 * expansion of a year of a user's meetings across daylight-saving changes in Berlin and New York,
 * with moved and cancelled occurrences, must equal what `GET /events/{id}/instances` lists; what
 * the feed holds and leaves out; its window and its cap at their edges; ETag and 304; and how long
 * a user with hundreds of events waits.
 */
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { allPages, at, createEvent, invite, send, timedBody, timeIndependentBody } from '../../support/events.js';
import { icalJsCalendar, icalJsOccurrences, issueFeed, nodeIcalOccurrences, readFeed, type Occurrence } from '../../support/calendar-feed.js';
import { dbOf, useTestApp, type TestApp, type TestUser } from '../../support/test-app.js';

const PAST_DAYS = 30;
const app = useTestApp({ call_in: { tel: '+49 30 1234567' }, calendar_feed: { past_days: PAST_DAYS } });
const DAY = 86_400_000;
const SUPPRESS = '?suppress_email_notification=true';

const auth = (user: TestUser) => ({ authorization: `Bearer ${user.accessToken}` });
const uidOf = (eventId: string) => `${eventId}@convene`;

async function newEvent(user: TestUser, body: Record<string, unknown>, on: TestApp = app): Promise<string> {
  return (await createEvent(on, user, body, SUPPRESS)).id;
}

/** An event of one hour starting `startMs`, in `zone`. */
function hourAt(title: string, startMs: number, zone = 'Europe/Berlin'): Record<string, unknown> {
  return timedBody({ title, starts_at: at(new Date(startMs).toISOString(), zone), ends_at: at(new Date(startMs + 3_600_000).toISOString(), zone) });
}

/** The occurrences the API lists for the event (cancelled ones left out), as [start, end]. */
async function listedOccurrences(user: TestUser, eventId: string): Promise<Occurrence[]> {
  const { items } = await allPages(app, user.accessToken, `/events/${eventId}/instances?per_page=100`);
  return items
    .filter((i) => i.status !== 'cancelled')
    .map((i): Occurrence => [new Date(i.starts_at.datetime).toISOString(), new Date(i.ends_at.datetime).toISOString()])
    .sort((a, b) => a[0].localeCompare(b[0]));
}

async function patchInstance(user: TestUser, eventId: string, instanceId: string, body: Record<string, unknown>): Promise<void> {
  const res = await send(app, 'PATCH', `/events/${eventId}/instances/${instanceId}${SUPPRESS}`, { token: user.accessToken, body });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
}

async function instanceIds(user: TestUser, eventId: string): Promise<string[]> {
  return (await allPages(app, user.accessToken, `/events/${eventId}/instances?per_page=100`)).items.map((i) => i.instance_id);
}

/** The UIDs of the feed's series (VEVENTs without RECURRENCE-ID). */
function uids(text: string): string[] {
  return icalJsCalendar(text)
    .getAllSubcomponents('vevent')
    .filter((v) => !v.hasProperty('recurrence-id'))
    .map((v) => String(v.getFirstPropertyValue('uid')))
    .sort();
}

describe('the feed URL', () => {
  it('is issued once, rotated (the old URL answers 404) and revoked (404), and only its hash is stored', async () => {
    const alice = await app.login('alice');
    expect((await app.request('GET', '/v1/users/me/calendar_feed', { headers: auth(alice) })).status).toBe(404);

    const first = await issueFeed(app, alice);
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\/calendar_feeds\/[A-Za-z0-9_-]{43}\/meetings\.ics$/);
    const looked = await app.request('GET', '/v1/users/me/calendar_feed', { headers: auth(alice) });
    expect(looked.status).toBe(200);
    expect(looked.text_).not.toContain(first.token);
    const rows = await dbOf(app).selectFrom('calendar_feeds').selectAll().execute();
    expect(rows).toEqual([{ user_id: alice.id, token_hash: createHash('sha256').update(first.token).digest('hex'), created_at: expect.any(Date) }]);
    await readFeed(app, first.path);

    const second = await issueFeed(app, alice);
    expect(second.token).not.toBe(first.token);
    const old = await app.request('GET', first.path);
    expect(old.status).toBe(404);
    expect(JSON.parse(old.text_)).toMatchObject({ code: 'not_found', status: '404' });
    await readFeed(app, second.path);

    expect((await app.request('DELETE', '/v1/users/me/calendar_feed', { headers: auth(alice) })).status).toBe(204);
    expect((await app.request('GET', second.path)).status).toBe(404);
    expect((await app.request('DELETE', '/v1/users/me/calendar_feed', { headers: auth(alice) })).status).toBe(404);
    expect((await app.request('GET', '/v1/users/me/calendar_feed', { headers: auth(alice) })).status).toBe(404);
  });

  it('names the public URL when one is configured, and a webcal twin', async () => {
    const other = await app.withConfig({ http: { public_url: 'https://meet.example.org/' } });
    try {
      const alice = await other.login('alice');
      const res = await other.request('POST', '/v1/users/me/calendar_feed', { headers: auth(alice) });
      const body = JSON.parse(res.text_) as { url: string; webcal_url: string };
      expect(body.url).toMatch(/^https:\/\/meet\.example\.org\/v1\/calendar_feeds\/[A-Za-z0-9_-]{43}\/meetings\.ics$/);
      expect(body.webcal_url).toBe(body.url.replace(/^https:/, 'webcal:'));
    } finally {
      await other.close();
    }
  });

  it('is one per user: rotating one user’s feed leaves another’s working', async () => {
    const [alice, bob] = await Promise.all([app.login('alice'), app.login('bob')]);
    const bobs = await issueFeed(app, bob);
    await issueFeed(app, alice);
    await issueFeed(app, alice);
    await readFeed(app, bobs.path);
  });

  it('answers 400 to a malformed token and 404 to an unknown one, with the error body', async () => {
    const short = await app.request('GET', '/v1/calendar_feeds/abc/meetings.ics');
    expect(short.status).toBe(400);
    expect(JSON.parse(short.text_).code).toBe('validation_failed');
    const unknown = await app.request('GET', `/v1/calendar_feeds/${'A'.repeat(43)}/meetings.ics`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('stops working while its user is disabled', async () => {
    const alice = await app.login('alice');
    const feed = await issueFeed(app, alice);
    await dbOf(app).updateTable('users').set({ disabled_at: new Date() }).where('id', '=', alice.id).execute();
    expect((await app.request('GET', feed.path)).status).toBe(404);
    await dbOf(app).updateTable('users').set({ disabled_at: null }).where('id', '=', alice.id).execute();
    await readFeed(app, feed.path);
  });
});

describe('the feed', () => {
  it('expands, in both parsers, to the occurrences the API lists: a year across DST in Berlin and New York', async () => {
    const alice = await app.login('alice');
    // Mondays 10:00–11:00 in Berlin for a year: summer time from 2027-03-28 to 2027-10-31
    const berlin = await newEvent(
      alice,
      timedBody({
        title: 'Berlin weekly',
        starts_at: at('2027-01-04T09:00:00Z'),
        ends_at: at('2027-01-04T10:00:00Z'),
        recurrence_pattern: ['RRULE:FREQ=WEEKLY;COUNT=52'],
      }),
    );
    // Tuesdays and Thursdays 09:00–09:30 in New York: daylight time from 2027-03-14 to 2027-11-07
    const newYork = await newEvent(
      alice,
      timedBody({
        title: 'New York standup',
        starts_at: at('2027-01-05T14:00:00Z', 'America/New_York'),
        ends_at: at('2027-01-05T14:30:00Z', 'America/New_York'),
        recurrence_pattern: ['RRULE:FREQ=WEEKLY;BYDAY=TU,TH;UNTIL=20271231T235959Z'],
      }),
    );
    const single = await newEvent(alice, hourAt('Night before the change', Date.parse('2027-03-27T22:30:00Z')));
    const allDay = await newEvent(
      alice,
      timedBody({ title: 'Offsite', is_all_day: true, starts_at: at('2027-06-10T00:00:00Z', 'UTC'), ends_at: at('2027-06-11T00:00:00Z', 'UTC') }),
    );

    const berlinIds = await instanceIds(alice, berlin);
    expect(berlinIds).toHaveLength(52);
    await patchInstance(alice, berlin, berlinIds[12]!, { status: 'cancelled' }); // 2027-03-29, the first Monday of summer time
    await patchInstance(alice, berlin, berlinIds[43]!, { status: 'cancelled' }); // 2027-11-01, the first of winter time
    // a winter Monday moved into summer time, and a summer one to another day with another title
    await patchInstance(alice, berlin, berlinIds[10]!, { starts_at: at('2027-04-06T07:00:00Z'), ends_at: at('2027-04-06T08:30:00Z') });
    await patchInstance(alice, berlin, berlinIds[30]!, { title: 'Moved planning', starts_at: at('2027-08-04T12:00:00Z'), ends_at: at('2027-08-04T13:00:00Z') });
    const newYorkIds = await instanceIds(alice, newYork);
    // Thursday 2027-03-11 (EST) moved to Monday 2027-03-15 (EDT), 09:00 local
    const march11 = newYorkIds.find((id) => id.startsWith('20270311'))!;
    await patchInstance(alice, newYork, march11, {
      starts_at: at('2027-03-15T13:00:00Z', 'America/New_York'),
      ends_at: at('2027-03-15T13:30:00Z', 'America/New_York'),
    });
    await patchInstance(
      alice,
      newYork,
      newYorkIds.find((id) => id.startsWith('20271104'))!,
      { status: 'cancelled' },
    );

    const text = await readFeed(app, (await issueFeed(app, alice)).path);
    const from = new Date('2026-12-01T00:00:00Z');
    const until = new Date('2028-02-01T00:00:00Z');
    const icalJs = icalJsOccurrences(text, until);
    const nodeIcal = nodeIcalOccurrences(text, from, until);

    for (const eventId of [berlin, newYork, single, allDay]) {
      const listed = await listedOccurrences(alice, eventId);
      expect(listed.length).toBeGreaterThan(0);
      expect(icalJs.get(uidOf(eventId)), `ical.js, ${eventId}`).toEqual(listed);
      expect(nodeIcal.get(uidOf(eventId)), `node-ical, ${eventId}`).toEqual(listed);
    }
    // the cases the expansions went through: 50 Berlin Mondays, the New York series less one
    expect(icalJs.get(uidOf(berlin))).toHaveLength(50);
    expect(icalJs.get(uidOf(berlin))).toContainEqual(['2027-08-04T12:00:00.000Z', '2027-08-04T13:00:00.000Z']);
    expect(icalJs.get(uidOf(berlin))).toContainEqual(['2027-06-07T08:00:00.000Z', '2027-06-07T09:00:00.000Z']); // 10:00 CEST
    expect(icalJs.get(uidOf(newYork))).toContainEqual(['2027-03-15T13:00:00.000Z', '2027-03-15T13:30:00.000Z']);
    expect(icalJs.get(uidOf(allDay))).toEqual([['2027-06-10T00:00:00.000Z', '2027-06-11T00:00:00.000Z']]);

    // RFC 5545: a VTIMEZONE for every zone named, and none for UTC or the all-day event
    const calendar = icalJsCalendar(text);
    expect(
      calendar
        .getAllSubcomponents('vtimezone')
        .map((z) => z.getFirstPropertyValue('tzid'))
        .sort(),
    ).toEqual(['America/New_York', 'Europe/Berlin']);
    const tzids = new Set([...text.matchAll(/;TZID=([^:;]+)/g)].map((m) => m[1]));
    expect([...tzids].sort()).toEqual(['America/New_York', 'Europe/Berlin']);
    expect(text).toContain('EXDATE;TZID=Europe/Berlin:20270329T100000,20271101T100000\r\n');
    expect(text).toContain('RECURRENCE-ID;TZID=Europe/Berlin:20270802T100000\r\n');
  }, 60_000);

  it('holds the user’s own events and the invitations not declined, TENTATIVE while unanswered, and nothing else', async () => {
    const [alice, bob, carol] = await Promise.all([app.login('alice'), app.login('bob'), app.login('carol')]);
    const soon = Date.now() + 7 * DAY;
    const own = await newEvent(alice, hourAt('Own', soon));
    await invite(app, own, alice, carol, 'accepted');
    const pending = await newEvent(bob, hourAt('Pending', soon));
    const accepted = await newEvent(bob, hourAt('Accepted', soon));
    const tentative = await newEvent(bob, hourAt('Tentative', soon));
    const declined = await newEvent(bob, hourAt('Declined', soon));
    const banned = await newEvent(bob, hourAt('Banned', soon));
    const notInvited = await newEvent(bob, hourAt('Not invited', soon));
    const untimed = await newEvent(alice, timeIndependentBody({ title: 'Untimed' }));
    await invite(app, pending, bob, alice, 'pending');
    await invite(app, accepted, bob, alice, 'accepted');
    await invite(app, tentative, bob, alice, 'tentative');
    await invite(app, declined, bob, alice, 'declined');
    await invite(app, banned, bob, alice, 'accepted');
    const bannedRoom = (await send(app, 'GET', `/events/${banned}`, { token: bob.accessToken })).json.room.id;
    await dbOf(app).insertInto('room_bans').values({ room_id: bannedRoom, user_id: alice.id, created_by: bob.id }).execute();

    const text = await readFeed(app, (await issueFeed(app, alice)).path);
    expect(uids(text)).toEqual([own, pending, accepted, tentative].map(uidOf).sort());
    for (const id of [declined, banned, notInvited, untimed]) expect(text).not.toContain(id);

    const calendar = icalJsCalendar(text);
    expect(calendar.getFirstPropertyValue('method')).toBeNull(); // a published calendar, not an iTIP request
    expect(calendar.getFirstPropertyValue('x-wr-calname')).toBe('Convene meetings');
    expect(text).toContain('REFRESH-INTERVAL;VALUE=DURATION:PT1H\r\n');
    const status = (id: string) =>
      calendar
        .getAllSubcomponents('vevent')
        .find((v) => v.getFirstPropertyValue('uid') === uidOf(id))!
        .getFirstPropertyValue('status');
    expect([own, accepted, pending, tentative].map(status)).toEqual(['CONFIRMED', 'CONFIRMED', 'TENTATIVE', 'TENTATIVE']);
    const organizer = calendar
      .getAllSubcomponents('vevent')
      .find((v) => v.getFirstPropertyValue('uid') === uidOf(pending))!
      .getFirstProperty('organizer')!;
    expect(organizer.getFirstValue()).toBe(`mailto:${bob.email}`);
  }, 60_000);

  it('shows no room password, invite code, call-in pin, streaming key or invitee', async () => {
    const [alice, carol] = await Promise.all([app.login('alice'), app.login('carol')]);
    const id = await newEvent(alice, { ...hourAt('Board', Date.now() + DAY), password: 'room-secret-42' });
    await invite(app, id, alice, carol, 'accepted');
    const event = (await send(app, 'GET', `/events/${id}`, { token: alice.accessToken })).json;
    const roomId: string = event.room.id;
    const pin: string = (await send(app, 'GET', `/rooms/${roomId}/sip`, { token: alice.accessToken })).json.password;
    const code: string = (await send(app, 'POST', `/rooms/${roomId}/invites`, { token: alice.accessToken, body: {} })).json.invite_code;
    const target = await send(app, 'POST', `/rooms/${roomId}/streaming_targets`, {
      token: alice.accessToken,
      body: {
        name: 'Channel',
        kind: 'custom',
        streaming_endpoint: 'rtmp://live.example.org/app',
        streaming_key: 'stream-key-77',
        public_url: 'https://video.example.org/a',
      },
    });
    expect(target.status).toBe(201);

    const text = await readFeed(app, (await issueFeed(app, alice)).path);
    expect(uids(text)).toEqual([uidOf(id)]);
    for (const secret of ['room-secret-42', pin, code, 'stream-key-77', carol.email, 'ATTENDEE']) expect(text).not.toContain(secret);
  });

  it('leaves out the events whose last occurrence ended more than past_days ago, to the minute', async () => {
    const alice = await app.login('alice');
    const edge = Date.now() - PAST_DAYS * DAY;
    const endsInside = await newEvent(alice, hourAt('Ended just inside', edge - 3_600_000 + 2 * 60_000));
    const endsOutside = await newEvent(alice, hourAt('Ended just outside', edge - 3_600_000 - 2 * 60_000));
    // a series that began long before the window and has occurrences in it
    const running = await newEvent(alice, { ...hourAt('Running', edge - 100 * DAY), recurrence_pattern: ['RRULE:FREQ=WEEKLY'] });
    const text = await readFeed(app, (await issueFeed(app, alice)).path);
    expect(uids(text)).toEqual([endsInside, running].map(uidOf).sort());
    expect(text).not.toContain(endsOutside);
  });

  it('holds at most max_events events: the running ones first, then the next, and cuts the furthest', async () => {
    const capped = await app.withConfig({ call_in: {}, calendar_feed: { past_days: PAST_DAYS, max_events: 3 } });
    try {
      const alice = await capped.login('alice');
      // on the instance alice logged in at (the other one may remember the same token of an earlier test's alice)
      const running = await newEvent(alice, { ...hourAt('Running', Date.now() - 100 * DAY), recurrence_pattern: ['RRULE:FREQ=DAILY'] }, capped);
      const near = await newEvent(alice, hourAt('Near', Date.now() + DAY), capped);
      const next = await newEvent(alice, hourAt('Next', Date.now() + 2 * DAY), capped);
      const feed = await issueFeed(capped, alice);
      expect(uids(await readFeed(capped, feed.path))).toEqual([running, near, next].map(uidOf).sort()); // exactly the cap

      const far = await newEvent(alice, hourAt('Far', Date.now() + 3 * DAY), capped);
      const text = await readFeed(capped, feed.path);
      expect(uids(text)).toEqual([running, near, next].map(uidOf).sort()); // one over: the furthest is cut
      expect(text).not.toContain(far);
    } finally {
      await capped.close();
    }
  });

  it('answers 304 to If-None-Match with its ETag, until something in it changes', async () => {
    const alice = await app.login('alice');
    const id = await newEvent(alice, hourAt('Planning', Date.now() + DAY));
    const { path } = await issueFeed(app, alice);
    const first = await app.request('GET', path);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
    expect(first.headers.get('cache-control')).toBe('private, no-cache');

    const again = await app.request('GET', path, { headers: { 'if-none-match': `"other", W/${etag}` } });
    expect(again.status).toBe(304);
    expect(again.text_).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    expect((await app.request('GET', path, { headers: { 'if-none-match': '"other"' } })).status).toBe(200);

    const patched = await send(app, 'PATCH', `/events/${id}${SUPPRESS}`, { token: alice.accessToken, body: { title: 'Planning (agenda)' } });
    expect(patched.status).toBe(200);
    const changed = await app.request('GET', path, { headers: { 'if-none-match': etag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
    expect(changed.text_).toContain('SUMMARY:Planning (agenda)');
  });
});

describe('a user with hundreds of events', () => {
  it('gets the feed fast', async () => {
    const alice = await app.login('alice');
    const base = Date.now() + DAY;
    // 300 events, every third a weekly series for a year
    for (let i = 0; i < 300; i++) {
      const body = hourAt(`Meeting ${i}`, base + i * 3_600_000, i % 2 === 0 ? 'Europe/Berlin' : 'America/New_York');
      await newEvent(alice, i % 3 === 0 ? { ...body, recurrence_pattern: ['RRULE:FREQ=WEEKLY;COUNT=52'] } : body);
    }
    const { path } = await issueFeed(app, alice);
    const times: number[] = [];
    let text = '';
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      text = await readFeed(app, path);
      times.push(performance.now() - started);
    }
    const median = times.sort((a, b) => a - b)[2]!;
    console.info(`calendar feed of 300 events (100 series): ${Math.round(median)} ms median of 5, ${text.length} bytes`);
    expect(uids(text)).toHaveLength(300);
    expect(median).toBeLessThan(1000);
  }, 120_000);
});

describe('issuing without [http] public_url', () => {
  it('answers 400 invalid_host when the Host header is no host name, and issues nothing', async () => {
    const alice = await app.login('alice');
    const { port } = new URL(app.url);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port, method: 'POST', path: '/v1/users/me/calendar_feed', headers: { host: 'not_a_host', ...auth(alice) } },
        (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => resolve({ status: res.statusCode!, body }));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).code).toBe('invalid_host');
    expect(await dbOf(app).selectFrom('calendar_feeds').selectAll().execute()).toEqual([]);
  });
});
