/**
 * queueEventNotification against a real database: who gets a mail for which change, what it says,
 * the attachment's method, UID and SEQUENCE, and that nothing is queued when suppressed, for a
 * meeting that is over, or when the change's transaction rolls back.
 */
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DB, EventRow } from '../../../src/db/schema.js';
import { NO_TIMES } from '../../../src/domain/events/event-times.js';
import { queueEventNotification, type EventNotification } from '../../../src/domain/notifications/outbox.js';
import { createTestDatabase, type TestDatabase } from '../../support/database.js';
import { insertEvent, insertUser, inviteEmail, inviteUser, notificationConfig, outboxRows, parseCalendar } from '../../support/notifications.js';

const config = notificationConfig();
const NOW = new Date('2029-12-01T08:00:00Z');

let testDb: TestDatabase;
let db: Kysely<DB>;
beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.database.db;
});
afterAll(async () => testDb.close());
beforeEach(async () => testDb.reset());

type Person = Awaited<ReturnType<typeof insertUser>>;
let ada: Person;
let bob: Person;
let mo: Person;

beforeEach(async () => {
  ada = await insertUser(db, 'ada');
  bob = await insertUser(db, 'bob');
  mo = await insertUser(db, 'mo');
});

function queue(event: EventRow, kind: EventNotification['kind'], more: Partial<EventNotification> = {}) {
  return db.transaction().execute((trx) => queueEventNotification(trx, { kind, eventId: event.id, actorId: ada.id, config, now: NOW, ...more }));
}

/** An event of ada's with bob (user), mo (moderator) and an external guest with an invite code invited. */
async function meetingWithInvitees(fields: Parameters<typeof insertEvent>[2] = {}) {
  const event = await insertEvent(db, ada.id, { roomPassword: 'v3ry-secret', ...fields });
  await inviteUser(db, event.id, bob.id, ada.id);
  await inviteUser(db, event.id, mo.id, ada.id, 'moderator');
  const code = await inviteEmail(db, event, 'guest@example.org', true);
  return { event, code: code! };
}

const sequenceOf = async (eventId: string) =>
  (await db.selectFrom('events').select('ical_sequence').where('id', '=', eventId).executeTakeFirstOrThrow()).ical_sequence;

describe('queueEventNotification', () => {
  it("created: one mail to the creator with a REQUEST of SEQUENCE 0, in the event's zone, with how to join", async () => {
    const event = await insertEvent(db, ada.id, { recurrence_pattern: ['RRULE:FREQ=WEEKLY;BYDAY=MO'], range_end: null });
    await queue(event, 'created');

    const rows = await outboxRows(db);
    expect(rows).toHaveLength(1);
    const [row] = rows;
    expect(row).toMatchObject({
      kind: 'created',
      event_id: event.id,
      recipients: [ada.email],
      subject: 'New meeting: Weekly planning',
      attempts: 0,
      sent_at: null,
    });
    // the creator made the change herself
    expect(row!.text).toContain('You have scheduled a meeting.');
    expect(row!.text).toContain('When: Monday, 7 January 2030, 10:00–11:00 (Europe/Berlin)');
    expect(row!.text).toContain('Repeats: every week on Monday');
    expect(row!.text).toContain('Plans for the coming week.');
    const sip = await db.selectFrom('sip_configs').selectAll().where('room_id', '=', event.room_id).executeTakeFirstOrThrow();
    expect(row!.text).toContain(`By phone: +49 30 1234567, call-in id ${sip.sip_id}, pin ${sip.password}`);

    const { method, events } = parseCalendar(row!.ics!);
    expect(method).toBe('REQUEST');
    expect(events[0]!.uid).toBe(`${event.id}@convene`);
    expect(events[0]!.sequence).toBe(0);
    expect(events[0]!.component.getFirstPropertyValue('rrule')!.toString()).toBe('FREQ=WEEKLY;BYDAY=MO');
    expect(await sequenceOf(event.id)).toBe(0);
  });

  it('created: nothing for the creator of an ad-hoc meeting', async () => {
    const event = await insertEvent(db, ada.id, { is_adhoc: true });
    await queue(event, 'created');
    expect(await outboxRows(db)).toEqual([]);
  });

  it('updated: one mail per person (creator, each invitee, the external guest), SEQUENCE raised each time, same UID', async () => {
    const { event, code } = await meetingWithInvitees();
    await queue(event, 'updated');
    await queue(event, 'updated');

    const rows = await outboxRows(db);
    expect(rows.map((r) => r.recipients)).toEqual([
      [ada.email],
      [bob.email],
      [mo.email],
      ['guest@example.org'],
      [ada.email],
      [bob.email],
      [mo.email],
      ['guest@example.org'],
    ]);
    expect(await sequenceOf(event.id)).toBe(2);
    const calendars = rows.map((r) => parseCalendar(r.ics!));
    expect(calendars.map((c) => c.events[0]!.sequence)).toEqual([1, 1, 1, 1, 2, 2, 2, 2]);
    expect(new Set(calendars.map((c) => c.events[0]!.uid))).toEqual(new Set([`${event.id}@convene`]));
    expect(calendars[0]!.method).toBe('REQUEST');
    expect(calendars[0]!.events[0]!.attendees.map((a) => [a.getFirstValue(), a.getParameter('role')])).toEqual([
      [`mailto:${bob.email}`, 'REQ-PARTICIPANT'],
      [`mailto:${mo.email}`, 'CHAIR'],
      ['mailto:guest@example.org', 'REQ-PARTICIPANT'],
    ]);
    expect(rows[0]!.subject).toBe('Updated meeting: Weekly planning');

    // the external guest's mail alone carries the invite code and the room password
    const guestText = rows[3]!.text;
    expect(guestText).toContain(`Invite code: ${code}`);
    expect(guestText).toContain('Room password: v3ry-secret');
    for (const row of [rows[0]!, rows[1]!, rows[2]!]) {
      expect(row.text).not.toContain(code);
      expect(row.text).not.toContain('v3ry-secret');
    }
    expect(rows[1]!.text).toMatch(/^Hello bob Tester,\n\nada Tester has changed a meeting\./);
  });

  it('cancelled: a CANCEL to everyone with a raised SEQUENCE, kept after the event row is gone', async () => {
    const { event } = await meetingWithInvitees();
    await db.transaction().execute(async (trx) => {
      await queueEventNotification(trx, { kind: 'cancelled', eventId: event.id, actorId: ada.id, config, now: NOW });
      await trx.deleteFrom('events').where('id', '=', event.id).execute();
    });
    const rows = await outboxRows(db);
    expect(rows).toHaveLength(4);
    for (const row of rows) {
      expect(row.subject).toBe('Cancelled meeting: Weekly planning');
      expect(row.text).not.toContain('How to join');
      const { method, events } = parseCalendar(row.ics!);
      expect(method).toBe('CANCEL');
      expect(events[0]!.component.getFirstPropertyValue('status')).toBe('CANCELLED');
      expect(events[0]!.sequence).toBe(1);
    }
  });

  it('cancelled: nothing for a meeting that is over, but a series without end is never over', async () => {
    const past = await insertEvent(db, ada.id, { starts_at: new Date('2029-11-01T09:00:00Z'), ends_at: new Date('2029-11-01T10:00:00Z') });
    await queue(past, 'cancelled');
    const ended = await insertEvent(db, ada.id, {
      starts_at: new Date('2029-01-01T09:00:00Z'),
      ends_at: new Date('2029-01-01T10:00:00Z'),
      recurrence_pattern: ['RRULE:FREQ=DAILY;COUNT=3'],
      range_end: new Date('2029-01-03T10:00:00Z'),
    });
    await queue(ended, 'cancelled');
    expect(await outboxRows(db)).toEqual([]);

    const endless = await insertEvent(db, ada.id, {
      starts_at: new Date('2029-01-01T09:00:00Z'),
      ends_at: new Date('2029-01-01T10:00:00Z'),
      recurrence_pattern: ['RRULE:FREQ=DAILY'],
      range_end: null,
    });
    await queue(endless, 'cancelled');
    expect((await outboxRows(db)).map((r) => r.event_id)).toEqual([endless.id]);
  });

  it('invited: only the given addresses, listed as attendees even before their invite row exists', async () => {
    const event = await insertEvent(db, ada.id);
    await inviteUser(db, event.id, bob.id, ada.id);
    await queue(event, 'invited', { recipients: ['New.Person@Example.org', 'new.person@example.org'] });

    const rows = await outboxRows(db);
    expect(rows.map((r) => r.recipients)).toEqual([['New.Person@Example.org']]);
    expect(rows[0]!.subject).toBe('Invitation: Weekly planning');
    expect(rows[0]!.text).toContain('ada Tester has invited you to a meeting.');
    const { method, events } = parseCalendar(rows[0]!.ics!);
    expect(method).toBe('REQUEST');
    expect(events[0]!.attendees.map((a) => a.getFirstValue())).toEqual([`mailto:${bob.email}`, 'mailto:New.Person@Example.org']);
    expect(await sequenceOf(event.id)).toBe(0);
  });

  it('uninvited: a CANCEL naming only the removed as attendees', async () => {
    const { event } = await meetingWithInvitees();
    await db.deleteFrom('event_invites').where('invitee', '=', bob.id).execute();
    await queue(event, 'uninvited', { recipients: [bob.email] });

    const rows = await outboxRows(db);
    expect(rows.map((r) => r.recipients)).toEqual([[bob.email]]);
    expect(rows[0]!.subject).toBe('Invitation withdrawn: Weekly planning');
    expect(rows[0]!.text).toContain('has removed you from a meeting');
    const { method, events } = parseCalendar(rows[0]!.ics!);
    expect(method).toBe('CANCEL');
    expect(events[0]!.attendees.map((a) => a.getFirstValue())).toEqual([`mailto:${bob.email}`]);
  });

  it('suppress: nothing queued and the SEQUENCE untouched', async () => {
    const { event } = await meetingWithInvitees();
    for (const kind of ['created', 'updated', 'cancelled', 'invited', 'uninvited'] as const) {
      await queue(event, kind, { suppress: true, recipients: kind.endsWith('invited') ? [bob.email] : undefined });
    }
    expect(await outboxRows(db)).toEqual([]);
    expect(await sequenceOf(event.id)).toBe(0);
  });

  it('a rolled-back change leaves no mail behind', async () => {
    const { event } = await meetingWithInvitees();
    await expect(
      db.transaction().execute(async (trx) => {
        await queueEventNotification(trx, { kind: 'updated', eventId: event.id, actorId: ada.id, config, now: NOW });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect(await outboxRows(db)).toEqual([]);
    expect(await sequenceOf(event.id)).toBe(0);
  });

  it('a time-independent meeting gets mails without a calendar attachment', async () => {
    const event = await insertEvent(db, ada.id, { is_time_independent: true, ...NO_TIMES });
    await inviteUser(db, event.id, bob.id, ada.id);
    await queue(event, 'updated');
    const rows = await outboxRows(db);
    expect(rows).toHaveLength(2);
    expect(rows.every((r) => r.ics === null)).toBe(true);
    expect(rows[0]!.text).toContain('When: any time (no fixed date)');
  });

  it('a changed and a cancelled occurrence travel as RECURRENCE-ID override and EXDATE', async () => {
    const event = await insertEvent(db, ada.id, { recurrence_pattern: ['RRULE:FREQ=WEEKLY;COUNT=4'], range_end: new Date('2030-01-28T10:00:00Z') });
    await db
      .insertInto('event_exceptions')
      .values([
        { event_id: event.id, instance_start: new Date('2030-01-14T09:00:00Z'), status: 'cancelled', created_by: ada.id },
        {
          event_id: event.id,
          instance_start: new Date('2030-01-21T09:00:00Z'),
          title: 'Special edition',
          starts_at: new Date('2030-01-21T13:00:00Z'),
          starts_at_tz: 'Europe/Berlin',
          created_by: ada.id,
        },
      ])
      .execute();
    await queue(event, 'updated');
    const [row] = await outboxRows(db);
    expect(row!.ics).toContain('EXDATE;TZID=Europe/Berlin:20300114T100000\r\n');
    const { events } = parseCalendar(row!.ics!);
    expect(events).toHaveLength(2);
    expect(events[1]!.component.getFirstPropertyValue('recurrence-id')!.toString()).toBe('2030-01-21T10:00:00');
    expect(events[1]!.summary).toBe('Special edition');
    expect(events[1]!.startDate.toJSDate().toISOString()).toBe('2030-01-21T13:00:00.000Z');
    expect(events[1]!.endDate.toJSDate().toISOString()).toBe('2030-01-21T14:00:00.000Z');
  });

  it('an unknown event queues nothing', async () => {
    await db
      .transaction()
      .execute((trx) => queueEventNotification(trx, { kind: 'updated', eventId: '00000000-0000-4000-8000-000000000000', actorId: ada.id, config }));
    expect(await outboxRows(db)).toEqual([]);
  });
});
