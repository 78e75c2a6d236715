/**
 * Event mails end to end: changes made through the HTTP API, the instance's own mail worker, a
 * real SMTP server, and the received attachments read with ical.js. Also: without `[smtp] url`
 * the outbox is kept, and an instance with SMTP later sends what was kept.
 */
import ICAL from 'ical.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createEvent, send, timedBody } from '../../support/events.js';
import { icsOf, outboxRows, parseCalendar, startSmtpServer, type TestSmtpServer } from '../../support/notifications.js';
import { startTestApp, type TestApp, type TestUser } from '../../support/test-app.js';

let smtp: TestSmtpServer;
let app: TestApp;
let ada: TestUser;
let bob: TestUser;

beforeAll(async () => {
  smtp = await startSmtpServer();
  app = await startTestApp({ smtp: { url: smtp.url, from: 'meetings@convene.test' }, call_in: { tel: '+49 30 1234567' } });
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});
beforeEach(async () => {
  await app.reset();
  smtp.mails.length = 0;
  ada = await app.login('ada');
  bob = await app.login('bob');
});

const weekly = () => timedBody({ recurrence_pattern: ['RRULE:FREQ=WEEKLY;BYDAY=TU;COUNT=5'] });

describe('event mails through the API', () => {
  it('create, invite, update, delete: each reaches its people with one UID and a growing SEQUENCE', async () => {
    const event = await createEvent(app, ada, weekly());
    expect((await send(app, 'POST', `/events/${event.id}/invites`, { token: ada.accessToken, body: { invitee: bob.id } })).status).toBe(201);
    expect((await send(app, 'PATCH', `/events/${event.id}`, { token: ada.accessToken, body: { title: 'Weekly planning (new room)' } })).status).toBe(200);
    expect((await send(app, 'DELETE', `/events/${event.id}`, { token: ada.accessToken })).status).toBe(204);

    await app.convene.mailWorker!.drain();
    const mails = await smtp.waitFor(6);
    const seen = mails.map((m) => {
      const { method, events } = parseCalendar(icsOf(m));
      return { to: m.envelopeTo[0], subject: m.parsed.subject, method, uid: events[0]!.uid, sequence: events[0]!.sequence };
    });
    expect(seen).toEqual([
      { to: ada.email, subject: 'New meeting: Weekly planning', method: 'REQUEST', uid: `${event.id}@convene`, sequence: 0 },
      { to: bob.email, subject: 'Invitation: Weekly planning', method: 'REQUEST', uid: `${event.id}@convene`, sequence: 0 },
      { to: ada.email, subject: 'Updated meeting: Weekly planning (new room)', method: 'REQUEST', uid: `${event.id}@convene`, sequence: 1 },
      { to: bob.email, subject: 'Updated meeting: Weekly planning (new room)', method: 'REQUEST', uid: `${event.id}@convene`, sequence: 1 },
      { to: ada.email, subject: 'Cancelled meeting: Weekly planning (new room)', method: 'CANCEL', uid: `${event.id}@convene`, sequence: 2 },
      { to: bob.email, subject: 'Cancelled meeting: Weekly planning (new room)', method: 'CANCEL', uid: `${event.id}@convene`, sequence: 2 },
    ]);
    const invitation = parseCalendar(icsOf(mails[1]!)).events[0]!;
    expect(invitation.startDate.toJSDate().toISOString()).toBe('2026-12-01T09:00:00.000Z');
    expect(invitation.component.getFirstProperty('dtstart')!.getParameter('tzid')).toBe('Europe/Berlin');
    // compared as ical.js writes rules (it orders the parts its own way)
    expect(invitation.component.getFirstPropertyValue('rrule')!.toString()).toBe(ICAL.Recur.fromString('FREQ=WEEKLY;BYDAY=TU;COUNT=5').toString());
    expect(invitation.attendees.map((a) => a.getFirstValue())).toEqual([`mailto:${bob.email}`]);
    expect(mails[1]!.parsed.text).toContain('By phone: +49 30 1234567');
  });

  it('suppress_email_notification=true queues nothing', async () => {
    const event = await createEvent(app, ada, weekly(), '?suppress_email_notification=true');
    const invite = await send(app, 'POST', `/events/${event.id}/invites?suppress_email_notification=true`, {
      token: ada.accessToken,
      body: { invitee: bob.id },
    });
    expect(invite.status).toBe(201);
    expect(await outboxRows(app.convene.database.db)).toEqual([]);
  });
});

describe('without [smtp] url', () => {
  it('runs no mail worker and keeps the outbox; an instance with SMTP sends what was kept', async () => {
    // an instance of its own: the SMTP instance above would otherwise send the row on its next poll
    const bare = await startTestApp();
    try {
      expect(bare.config.smtp.url).toBeUndefined();
      expect(bare.convene.mailWorker).toBeUndefined();
      const carol = await bare.login('carol');
      const event = await createEvent(bare, carol, weekly());
      const kept = await outboxRows(bare.convene.database.db);
      expect(kept.map((r) => ({ event: r.event_id, sent: r.sent_at, attempts: r.attempts }))).toEqual([{ event: event.id, sent: null, attempts: 0 }]);

      const sender = await bare.withConfig({ smtp: { url: smtp.url, from: 'meetings@convene.test' } });
      try {
        await sender.convene.mailWorker!.drain();
        const [mail] = await smtp.waitFor(1);
        expect(mail!.envelopeTo).toEqual([carol.email]);
        expect((await outboxRows(bare.convene.database.db))[0]!.sent_at).not.toBeNull();
      } finally {
        await sender.close();
      }
    } finally {
      await bare.close();
    }
  });
});
