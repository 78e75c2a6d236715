/**
 * Fixtures of the notification tests: a real SMTP server on port 0 (smtp-server) whose received
 * mails are parsed with mailparser, the calendar attachment of a mail parsed with ical.js, and
 * events written straight into the database (user, room with SIP config, invites, exceptions).
 */
import type { AddressInfo } from 'node:net';
import ICAL from 'ical.js';
import type { Kysely } from 'kysely';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import type { DB, EventRow, NewEventRow } from '../../src/db/schema.js';
import { createSipConfig } from '../../src/domain/sip/sip-configs.repository.js';

export interface ReceivedMail {
  envelopeTo: string[];
  parsed: ParsedMail;
}

export interface TestSmtpServer {
  url: string;
  mails: ReceivedMail[];
  /** While set, every message is refused with this SMTP reply code (4xx: try later). */
  refuseWith: number | undefined;
  /** Milliseconds the server waits before accepting a message's data (a slow server). */
  delayMs: number;
  /** Resolves once a message's data has begun to arrive (the client is mid-send). */
  sending(): Promise<void>;
  /** Resolves once `count` mails in total have arrived. */
  waitFor(count: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

export async function startSmtpServer(): Promise<TestSmtpServer> {
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const sendingWaiters: Array<() => void> = [];
  const state: TestSmtpServer = {
    url: '',
    mails: [],
    refuseWith: undefined,
    delayMs: 0,
    sending: () => new Promise<void>((resolve) => sendingWaiters.push(resolve)),
    async waitFor(count) {
      if (state.mails.length < count) await new Promise<void>((resolve) => waiters.push({ count, resolve }));
      return state.mails;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      for (const resolve of sendingWaiters.splice(0)) resolve();
      if (state.refuseWith) {
        stream.resume();
        stream.on('end', () => callback(Object.assign(new Error('try again later'), { responseCode: state.refuseWith })));
        return;
      }
      simpleParser(stream)
        .then(async (parsed) => {
          if (state.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, state.delayMs));
          state.mails.push({ envelopeTo: session.envelope.rcptTo.map((r) => r.address), parsed });
          for (const waiter of waiters.filter((w) => state.mails.length >= w.count)) waiter.resolve();
          callback();
        })
        .catch(callback);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  state.url = `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
  return state;
}

/** A URL where no SMTP server listens (the port was just free). */
export async function deadSmtpUrl(): Promise<string> {
  const smtp = await startSmtpServer();
  await smtp.close();
  return smtp.url;
}

/** The text of a mail's calendar attachment (`invite.ics`). */
export function icsOf(mail: ReceivedMail): string {
  const attachment = mail.parsed.attachments.find((a) => a.filename === 'invite.ics' || a.contentType.startsWith('text/calendar'));
  if (!attachment) throw new Error(`mail "${mail.parsed.subject}" has no calendar attachment`);
  return attachment.content.toString('utf8');
}

export interface ParsedCalendar {
  method: string;
  /** Every VEVENT; the first is the master. */
  events: InstanceType<typeof ICAL.Event>[];
  component: InstanceType<typeof ICAL.Component>;
}

/** Parses iCalendar text with ical.js and registers its VTIMEZONEs so zoned times convert. */
export function parseCalendar(ics: string): ParsedCalendar {
  const component = new ICAL.Component(ICAL.parse(ics));
  for (const zone of component.getAllSubcomponents('vtimezone')) {
    const tz = new ICAL.Timezone(zone);
    if (!ICAL.TimezoneService.has(tz.tzid)) ICAL.TimezoneService.register(tz);
  }
  const vevents = component.getAllSubcomponents('vevent');
  return { method: String(component.getFirstPropertyValue('method')), events: vevents.map((v) => new ICAL.Event(v)), component };
}

/** The configuration of notification tests: defaults, plus call-in details and an SMTP sender. */
export function notificationConfig(overrides: Record<string, unknown> = {}): Config {
  return loadConfig({
    file: false,
    env: {},
    overrides: { call_in: { tel: '+49 30 1234567' }, smtp: { from: 'Convene <meetings@convene.test>' }, ...overrides },
  });
}

let userSeq = 0;

export async function insertUser(
  db: Kysely<DB>,
  name: string,
  email = `${name}-${++userSeq}@example.test`,
): Promise<{ id: string; email: string; name: string }> {
  const row = await db
    .insertInto('users')
    .values({ oidc_issuer: 'https://idp.test', oidc_sub: `sub-${name}-${++userSeq}`, email, display_name: `${name} Tester` })
    .returning(['id', 'email', 'display_name'])
    .executeTakeFirstOrThrow();
  return { id: row.id, email: row.email, name: row.display_name };
}

/** An event with its own room and SIP config, created by `creatorId`; timed fields as given. */
export async function insertEvent(
  db: Kysely<DB>,
  creatorId: string,
  fields: Partial<Omit<NewEventRow, 'room_id' | 'created_by' | 'updated_by'>> & { roomPassword?: string } = {},
): Promise<EventRow> {
  const { roomPassword, ...eventFields } = fields;
  const room = await db
    .insertInto('rooms')
    .values({ created_by: creatorId, password: roomPassword ?? null })
    .returning('id')
    .executeTakeFirstOrThrow();
  await createSipConfig(db, room.id);
  return db
    .insertInto('events')
    .values({
      room_id: room.id,
      created_by: creatorId,
      updated_by: creatorId,
      title: 'Weekly planning',
      description: 'Plans for the coming week.',
      is_time_independent: false,
      is_all_day: false,
      starts_at: new Date('2030-01-07T09:00:00Z'),
      starts_at_tz: 'Europe/Berlin',
      ends_at: new Date('2030-01-07T10:00:00Z'),
      ends_at_tz: 'Europe/Berlin',
      duration_secs: 3600,
      ...eventFields,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function inviteUser(db: Kysely<DB>, eventId: string, inviteeId: string, createdBy: string, role: 'user' | 'moderator' = 'user'): Promise<void> {
  await db.insertInto('event_invites').values({ event_id: eventId, invitee: inviteeId, created_by: createdBy, role }).execute();
}

/** An e-mail invite; `withCode` also creates the room invite code an external guest gets. Answers the code. */
export async function inviteEmail(db: Kysely<DB>, event: EventRow, email: string, withCode = false): Promise<string | null> {
  const code = withCode
    ? (
        await db
          .insertInto('room_invites')
          .values({ room_id: event.room_id, created_by: event.created_by, updated_by: event.created_by })
          .returning('code')
          .executeTakeFirstOrThrow()
      ).code
    : null;
  await db.insertInto('event_email_invites').values({ event_id: event.id, email, created_by: event.created_by, room_invite_code: code }).execute();
  return code;
}

export async function outboxRows(db: Kysely<DB>) {
  return db.selectFrom('email_outbox').selectAll().orderBy('id').execute();
}
