/**
 * The mail worker against a real SMTP server (smtp-server on port 0) and a real database: what
 * arrives, retries with back-off when the server is down or refuses, several workers never sending
 * one message twice, stopping while a mail is under way, and no `[smtp] url` keeping the outbox.
 */
import type { Kysely } from 'kysely';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DB } from '../../../src/db/schema.js';
import { createMailWorker, LEASE_MS, retryDelayMs, RETRY_CAP_MS, type MailWorker } from '../../../src/domain/notifications/mail-worker.js';
import { queueEventNotification } from '../../../src/domain/notifications/outbox.js';
import { createTestDatabase, type TestDatabase } from '../../support/database.js';
import {
  deadSmtpUrl,
  icsOf,
  insertEvent,
  insertUser,
  inviteUser,
  notificationConfig,
  outboxRows,
  parseCalendar,
  startSmtpServer,
  type TestSmtpServer,
} from '../../support/notifications.js';

const config = notificationConfig();
const FROM = 'Convene <meetings@convene.test>';
const logger = pino({ level: 'silent' });

let testDb: TestDatabase;
let db: Kysely<DB>;
let smtp: TestSmtpServer;
const workers: MailWorker[] = [];

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.database.db;
  smtp = await startSmtpServer();
});
afterAll(async () => {
  await smtp.close();
  await testDb.close();
});
beforeEach(async () => {
  await testDb.reset();
  smtp.mails.length = 0;
  smtp.refuseWith = undefined;
  smtp.delayMs = 0;
});
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
});

/** A clock the test moves by hand. */
function manualClock(start = new Date()) {
  let now = start.getTime();
  return { now: () => new Date(now), advance: (ms: number) => (now += ms) };
}

function worker(url: string, now?: () => Date): MailWorker {
  const w = createMailWorker({ db, smtp: { url, from: FROM }, logger, now });
  workers.push(w);
  return w;
}

async function queueUpdate() {
  const ada = await insertUser(db, 'ada');
  const bob = await insertUser(db, 'bob');
  const event = await insertEvent(db, ada.id, { recurrence_pattern: ['RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=10'], range_end: new Date('2030-03-11T10:00:00Z') });
  await inviteUser(db, event.id, bob.id, ada.id);
  await db.transaction().execute((trx) => queueEventNotification(trx, { kind: 'updated', eventId: event.id, actorId: ada.id, config }));
  return { ada, bob, event };
}

describe('mail worker', () => {
  it('sends each queued mail to its one recipient, with the calendar as text/calendar part and invite.ics, and marks it sent', async () => {
    const { ada, bob, event } = await queueUpdate();
    const clock = manualClock();
    expect(await worker(smtp.url, clock.now).drain()).toBe(2);

    const mails = await smtp.waitFor(2);
    expect(mails.map((m) => m.envelopeTo)).toEqual([[ada.email], [bob.email]]);
    const mail = mails[1]!;
    expect(mail.parsed.from?.value).toEqual([{ name: 'Convene', address: 'meetings@convene.test' }]);
    expect(mail.parsed.subject).toBe('Updated meeting: Weekly planning');
    expect(mail.parsed.text).toContain('Hello bob Tester,');
    expect(mail.parsed.text).toContain('Repeats: every week on Monday for 10 times');

    const calendarPart = mail.parsed.attachments.find((a) => a.contentType === 'text/calendar');
    expect(calendarPart?.content.toString()).toContain('METHOD:REQUEST');
    expect(mail.parsed.attachments.some((a) => a.filename === 'invite.ics')).toBe(true);
    const { method, events } = parseCalendar(icsOf(mail));
    expect(method).toBe('REQUEST');
    expect(events[0]!.uid).toBe(`${event.id}@convene`);
    expect(events[0]!.sequence).toBe(1);
    expect(events[0]!.startDate.toJSDate().toISOString()).toBe('2030-01-07T09:00:00.000Z');
    expect(events[0]!.component.getFirstProperty('dtstart')!.getParameter('tzid')).toBe('Europe/Berlin');

    const rows = await outboxRows(db);
    expect(rows.map((r) => r.sent_at?.getTime())).toEqual([clock.now().getTime(), clock.now().getTime()]);
    expect(await worker(smtp.url, clock.now).drain()).toBe(0);
    expect(smtp.mails).toHaveLength(2);
  });

  it('keeps a mail when the SMTP server is down and retries it after a doubling wait, until it goes out', async () => {
    await queueUpdate();
    const clock = manualClock();
    const down = worker(await deadSmtpUrl(), clock.now);

    expect(await down.drain()).toBe(0);
    let rows = await outboxRows(db);
    expect(rows.map((r) => r.attempts)).toEqual([1, 1]);
    expect(rows[0]!.last_error).toMatch(/ECONNREFUSED|connect/i);
    expect(rows[0]!.next_attempt_at.getTime()).toBe(clock.now().getTime() + 30_000);

    // not before its time: one millisecond short of 30 s nothing is tried
    clock.advance(30_000 - 1);
    await down.drain();
    expect((await outboxRows(db)).map((r) => r.attempts)).toEqual([1, 1]);
    clock.advance(1);
    await down.drain();
    rows = await outboxRows(db);
    expect(rows.map((r) => r.attempts)).toEqual([2, 2]);
    expect(rows[0]!.next_attempt_at.getTime()).toBe(clock.now().getTime() + 60_000);
    expect(rows.every((r) => r.sent_at === null)).toBe(true);

    // the server is back (another instance, the same outbox): both go out, nothing was lost
    clock.advance(60_000);
    expect(await worker(smtp.url, clock.now).drain()).toBe(2);
    expect(smtp.mails).toHaveLength(2);
    rows = await outboxRows(db);
    expect(rows.every((r) => r.sent_at !== null && r.last_error === null)).toBe(true);
  });

  it('treats a refusal (451) like an outage: counted, kept, sent later', async () => {
    await queueUpdate();
    const clock = manualClock();
    const w = worker(smtp.url, clock.now);
    smtp.refuseWith = 451;
    expect(await w.drain()).toBe(0);
    const rows = await outboxRows(db);
    expect(rows.map((r) => r.attempts)).toEqual([1, 1]);
    expect(rows[0]!.last_error).toContain('451');

    smtp.refuseWith = undefined;
    clock.advance(30_000);
    expect(await w.drain()).toBe(2);
    expect(smtp.mails).toHaveLength(2);
  });

  it('doubles the wait from 30 s and stops growing at one hour', () => {
    expect([1, 2, 3, 7].map(retryDelayMs)).toEqual([30_000, 60_000, 120_000, 1_920_000]);
    expect(retryDelayMs(8)).toBe(RETRY_CAP_MS); // 30 s × 2^7 = 3,840 s: over the cap
    expect(retryDelayMs(500)).toBe(RETRY_CAP_MS);
  });

  it('never sends a message twice when several workers drain the same outbox at once', async () => {
    const { ada, event } = await queueUpdate();
    for (let i = 0; i < 9; i++) {
      await db.transaction().execute((trx) => queueEventNotification(trx, { kind: 'updated', eventId: event.id, actorId: ada.id, config }));
    }
    const total = (await outboxRows(db)).length;
    expect(total).toBe(20);

    const counts = await Promise.all([worker(smtp.url).drain(), worker(smtp.url).drain(), worker(smtp.url).drain()]);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(total);
    expect(smtp.mails).toHaveLength(total);
    const sequences = smtp.mails.map((m) => `${m.envelopeTo[0]} ${parseCalendar(icsOf(m)).events[0]!.sequence}`);
    expect(new Set(sequences).size).toBe(total);
  });

  it('stop() lets the mail under way finish and be marked; the one it did not start stays due', async () => {
    await queueUpdate();
    const clock = manualClock();
    const w = worker(smtp.url, clock.now);
    smtp.delayMs = 300;
    const sending = smtp.sending();
    const draining = w.drain();
    await sending; // the first mail's data is on the wire
    await w.stop();

    const [first, second] = await outboxRows(db);
    expect(first!.sent_at).not.toBeNull();
    expect(smtp.mails).toHaveLength(1);
    // never claimed: still due now, for the next instance to send
    expect(second).toMatchObject({ sent_at: null, attempts: 0 });
    expect(second!.next_attempt_at.getTime()).toBeLessThanOrEqual(clock.now().getTime());
    expect(await draining).toBe(1);
  });

  it('re-sends a message whose sender died mid-send once its lease is over', async () => {
    await queueUpdate();
    const clock = manualClock();
    // a worker that claims and then "dies": the claim moves next_attempt_at one lease ahead
    await db
      .updateTable('email_outbox')
      .set({ next_attempt_at: new Date(clock.now().getTime() + LEASE_MS) })
      .execute();
    const w = worker(smtp.url, clock.now);
    expect(await w.drain()).toBe(0);
    clock.advance(LEASE_MS);
    expect(await w.drain()).toBe(2);
  });
});
