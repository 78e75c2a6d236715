import { beforeEach, describe, expect, it } from 'vitest';
import { useTestApp, type TestUser } from '../../support/test-app.js';
import { at, createEvent, invite, send, timeIndependentBody, timedBody, type Event } from '../../support/events.js';

const app = useTestApp();
let alice: TestUser;
let bob: TestUser;
beforeEach(async () => {
  alice = await app.login('alice');
  bob = await app.login('bob');
});

const db = () => app.convene.database.db;
const patch = (event: Event, body: unknown, query = '') => send(app, 'PATCH', `/events/${event.id}${query}`, { token: alice.accessToken, body });
const exceptionCount = async (eventId: string) =>
  (await db().selectFrom('event_exceptions').select('instance_start').where('event_id', '=', eventId).execute()).length;
const addException = (event: Event, start: string) =>
  db().insertInto('event_exceptions').values({ event_id: event.id, instance_start: start, created_by: alice.id, title: 'Moved' }).execute();

describe('get_event', () => {
  it('answers the event with at most invitees_max invitees and tells when more exist', async () => {
    const event = await createEvent(app, alice);
    const carol = await app.login('carol');
    await invite(app, event.id, alice, bob, 'accepted');
    await invite(app, event.id, alice, carol);
    await db().insertInto('event_email_invites').values({ event_id: event.id, email: 'dave@example.com', created_by: alice.id }).execute();
    const get = (max?: number) => send(app, 'GET', `/events/${event.id}${max === undefined ? '' : `?invitees_max=${max}`}`, { token: alice.accessToken });

    const none = await get();
    expect(none.json).toMatchObject({ invitees: [], invitees_truncated: true });
    const one = await get(1);
    expect(one.json.invitees).toEqual([{ profile: expect.objectContaining({ kind: 'registered', id: bob.id, role: 'user' }), status: 'accepted' }]);
    expect(one.json.invitees_truncated).toBe(true);
    const all = await get(3);
    expect(all.json.invitees.map((i: any) => i.profile.email)).toEqual([bob.email, carol.email, 'dave@example.com']);
    expect(all.json.invitees_truncated).toBe(false);
    expect((await get(4294967295)).json.invitees).toHaveLength(3);
    expect((await get(-1)).status).toBe(400);
    expect((await get(4294967296)).status).toBe(400);
  });

  it('answers 404 for an unknown event and 400 for an id that is not a uuid', async () => {
    expect((await send(app, 'GET', '/events/00000000-0000-4000-8000-000000000000', { token: alice.accessToken })).status).toBe(404);
    const bad = await send(app, 'GET', '/events/not-a-uuid', { token: alice.accessToken });
    expect(bad.status).toBe(400);
    expect(bad.json.code).toBe('validation_failed');
  });
});

describe('patch_event', () => {
  it('changes the given fields, keeps the others and records who changed it', async () => {
    const event = await createEvent(app, alice, timedBody({ password: 'old-secret' }));
    const res = await patch(event, { title: 'Renamed', waiting_room: true });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      title: 'Renamed',
      description: event.description,
      starts_at: event.starts_at,
      room: { id: event.room.id, password: 'old-secret', waiting_room: true },
    });
    const removed = await patch(event, { password: 'new-secret' });
    expect(removed.json.room.password).toBe('new-secret');
    expect(new Date(res.json.updated_at).getTime()).toBeGreaterThanOrEqual(new Date(event.updated_at).getTime());
  });

  it('refuses an empty body and one with only unknown fields', async () => {
    const event = await createEvent(app, alice);
    for (const body of [{}, { e2e_encryption: true }]) {
      const res = await patch(event, body);
      expect(res.status).toBe(400);
      expect(res.json.code).toBe('validation_failed');
    }
    expect((await send(app, 'PATCH', `/events/${event.id}`, { token: alice.accessToken, raw: '{oops' })).json.code).toBe('invalid_json');
  });

  it.each([
    ['title', 255],
    ['description', 4096],
    ['password', 255],
  ])('accepts a %s of %i characters and refuses one more', async (field, max) => {
    const event = await createEvent(app, alice);
    expect((await patch(event, { [field]: 'x'.repeat(max) })).status).toBe(200);
    const res = await patch(event, { [field]: 'x'.repeat(max + 1) });
    expect(res.status).toBe(400);
    expect(res.json.errors).toContainEqual(expect.objectContaining({ field, code: 'invalid_length' }));
  });

  it('accepts a password of 1 character and refuses an empty one', async () => {
    const event = await createEvent(app, alice);
    expect((await patch(event, { password: 'p' })).json.room.password).toBe('p');
    expect((await patch(event, { password: '' })).status).toBe(400);
  });

  it('keeps a recurring event’s pattern and exceptions when the pattern is absent or unchanged', async () => {
    const event = await createEvent(app, alice, timedBody({ recurrence_pattern: ['RRULE:FREQ=WEEKLY;COUNT=5'] }));
    await addException(event, '2026-12-08T09:00:00Z');
    const renamed = await patch(event, { title: 'Renamed', starts_at: at('2026-12-01T08:00:00Z') });
    expect(renamed.json.recurrence_pattern).toEqual(['RRULE:FREQ=WEEKLY;COUNT=5']);
    expect(renamed.json.type).toBe('recurring');
    await patch(event, { starts_at: at('2026-12-01T09:00:00Z'), recurrence_pattern: ['RRULE:FREQ=WEEKLY;COUNT=5'] });
    expect(await exceptionCount(event.id)).toBe(1);
  });

  it('deletes the exceptions and recomputes the span when the pattern changes', async () => {
    const event = await createEvent(app, alice, timedBody({ recurrence_pattern: ['RRULE:FREQ=WEEKLY;COUNT=5'] }));
    await addException(event, '2026-12-08T09:00:00Z');
    const res = await patch(event, { recurrence_pattern: ['RRULE:FREQ=WEEKLY;COUNT=2'] });
    expect(res.status).toBe(200);
    expect(await exceptionCount(event.id)).toBe(0);
    const row = await db().selectFrom('events').select('range_end').where('id', '=', event.id).executeTakeFirstOrThrow();
    expect(row.range_end).toEqual(new Date('2026-12-08T10:00:00Z'));
    const single = await patch(event, { recurrence_pattern: [] });
    expect(single.json).toMatchObject({ type: 'single', recurrence_pattern: [] });
  });

  it('switches between timed and time-independent with the field errors of the contract', async () => {
    const event = await createEvent(app, alice);
    const toTi = await patch(event, { is_time_independent: true });
    expect(toTi.status).toBe(200);
    expect(toTi.json.is_time_independent).toBe(true);
    expect(toTi.json).not.toHaveProperty('starts_at');

    const ignored = await patch(event, { starts_at: at('2026-12-01T09:00:00Z') });
    expect(ignored.status).toBe(400);
    expect(ignored.json.errors).toEqual([expect.objectContaining({ field: 'starts_at', code: 'ignored_value' })]);

    const incomplete = await patch(event, { is_time_independent: false, starts_at: at('2026-12-01T09:00:00Z') });
    expect(incomplete.status).toBe(400);
    expect(incomplete.json.errors.map((e: any) => [e.field, e.code])).toEqual([
      ['is_all_day', 'value_required'],
      ['ends_at', 'value_required'],
    ]);

    const back = await patch(event, {
      is_time_independent: false,
      is_all_day: false,
      starts_at: at('2027-01-05T09:00:00Z'),
      ends_at: at('2027-01-05T09:30:00Z'),
    });
    expect(back.status).toBe(200);
    expect(back.json).toMatchObject({ is_time_independent: false, starts_at: at('2027-01-05T09:00:00Z'), ends_at: at('2027-01-05T09:30:00Z') });
  });

  it('applies the checks of create to the resulting event', async () => {
    const event = await createEvent(app, alice);
    const before = await patch(event, { ends_at: at('2026-12-01T08:00:00Z') });
    expect(before.json.code).toBe('invalid_event');
    const allDay = await patch(event, { is_all_day: true });
    expect(allDay.json.code).toBe('invalid_event');
    const rule = await patch(event, { recurrence_pattern: ['RRULE:FREQ=MINUTELY'] });
    expect(rule.json.code).toBe('invalid_event');
    const ti = await createEvent(app, alice, timeIndependentBody());
    expect((await patch({ id: ti.id } as Event, { recurrence_pattern: ['RRULE:FREQ=DAILY'] })).json.errors[0].code).toBe('ignored_value');
  });

  it('queues an update mail unless suppressed', async () => {
    const event = await createEvent(app, alice, timedBody(), '?suppress_email_notification=true');
    await patch(event, { title: 'Quiet' }, '?suppress_email_notification=true');
    expect(await db().selectFrom('email_outbox').select('kind').execute()).toEqual([]);
    await patch(event, { title: 'Loud' });
    expect(await db().selectFrom('email_outbox').select(['kind', 'event_id']).execute()).toEqual([{ kind: 'updated', event_id: event.id }]);
  });
});

describe('delete_event', () => {
  it('deletes the event with its room, SIP config, exceptions and favorites, after queueing the cancellation', async () => {
    const event = await createEvent(
      app,
      alice,
      timedBody({ starts_at: at('2030-01-01T09:00:00Z'), ends_at: at('2030-01-01T10:00:00Z') }),
      '?suppress_email_notification=true',
    );
    await invite(app, event.id, alice, bob);
    await db().insertInto('event_favorites').values({ user_id: bob.id, event_id: event.id }).execute();
    const res = await send(app, 'DELETE', `/events/${event.id}`, { token: alice.accessToken });
    expect(res.status).toBe(204);
    expect(await db().selectFrom('rooms').select('id').where('id', '=', event.room.id).execute()).toEqual([]);
    expect(await db().selectFrom('sip_configs').select('room_id').where('room_id', '=', event.room.id).execute()).toEqual([]);
    expect(await db().selectFrom('event_favorites').select('user_id').execute()).toEqual([]);
    const mails = await db().selectFrom('email_outbox').select(['kind', 'event_id', 'recipients']).orderBy('id').execute();
    expect(mails.map((m) => [m.kind, m.event_id])).toContainEqual(['cancelled', event.id]);
    expect(mails.flatMap((m) => m.recipients)).toContain(bob.email);
    expect((await send(app, 'GET', `/events/${event.id}`, { token: alice.accessToken })).status).toBe(404);
    expect((await send(app, 'DELETE', `/events/${event.id}`, { token: alice.accessToken })).status).toBe(404);
  });

  it('queues nothing when suppressed', async () => {
    const event = await createEvent(app, alice, timedBody(), '?suppress_email_notification=true');
    await send(app, 'DELETE', `/events/${event.id}?suppress_email_notification=true`, { token: alice.accessToken });
    expect(await db().selectFrom('email_outbox').select('id').execute()).toEqual([]);
  });
});

describe('favorites', () => {
  it('adds (201, then 204) and removes (204, then 404) a favorite, and the event shows it', async () => {
    const event = await createEvent(app, alice);
    const put = () => send(app, 'PUT', `/users/me/event_favorites/${event.id}`, { token: alice.accessToken });
    const del = () => send(app, 'DELETE', `/users/me/event_favorites/${event.id}`, { token: alice.accessToken });
    expect((await put()).status).toBe(201);
    expect((await put()).status).toBe(204);
    expect((await send(app, 'GET', `/events/${event.id}`, { token: alice.accessToken })).json.is_favorite).toBe(true);
    expect((await del()).status).toBe(204);
    const again = await del();
    expect(again.status).toBe(404);
    expect(again.json.code).toBe('not_found');
    expect((await send(app, 'GET', `/events/${event.id}`, { token: alice.accessToken })).json.is_favorite).toBe(false);
  });

  it('is per user', async () => {
    const event = await createEvent(app, alice);
    await invite(app, event.id, alice, bob);
    expect((await send(app, 'PUT', `/users/me/event_favorites/${event.id}`, { token: bob.accessToken })).status).toBe(201);
    expect((await send(app, 'GET', `/events/${event.id}`, { token: alice.accessToken })).json.is_favorite).toBe(false);
    expect((await send(app, 'GET', `/events/${event.id}`, { token: bob.accessToken })).json.is_favorite).toBe(true);
    expect((await send(app, 'DELETE', `/users/me/event_favorites/${event.id}`, { token: alice.accessToken })).status).toBe(404);
  });
});
