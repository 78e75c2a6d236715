/**
 * Event notifications, queued in the transaction of the change they report (a transactional
 * outbox): a mail exists only if the change commits, and nothing is lost between commit and
 * sending, because the worker (`mail-worker.ts`) sends whatever `email_outbox` holds, whenever SMTP
 * is configured and reachable.
 *
 * One row per recipient: each mail is addressed to one person (invitees do not see each other's
 * addresses in the headers, an external guest's mail carries their own invite code), and one
 * refused address does not hold back the others.
 */
import type { Config } from '../../config/schema.js';
import type { Db, EventRow, NewEmailOutboxRow } from '../../db/schema.js';
import { calendarEvent, mailSubject, mailText, type EventNotificationKind, type MailRecipient } from './event-mail.js';
import { readEventSnapshot, type EventSnapshot } from './event-snapshot.js';
import { buildCalendar, type CalendarEvent } from './ics.js';
import { bumpIcalSequence, insertMails } from './notifications.repository.js';

/** The server's gauge of unsent mail reads it here. */
export { pendingMailCount } from './notifications.repository.js';

export interface EventNotification {
  kind: EventNotificationKind;
  eventId: string;
  actorId: string;
  /** Specific addresses (invited/uninvited); default: every invitee, plus the creator for created/updated/cancelled. */
  recipients?: string[];
  /** The caller asked for no mail (`suppress_email_notification=true`): nothing is queued. */
  suppress?: boolean;
  config: Config;
  /** The clock (DTSTAMP, "has the event ended"); tests pass their own. */
  now?: Date;
}

/**
 * Queues the mails of one change. Call it inside the change's transaction, with that transaction;
 * for `cancelled` before the event row is deleted. `updated` and `cancelled` raise the event's
 * iCalendar SEQUENCE, so calendar programs take the new state over the one they hold.
 */
export async function queueEventNotification(trx: Db, n: EventNotification): Promise<void> {
  if (n.suppress) return;
  const snapshot = await readEventSnapshot(trx, n.eventId, n.actorId);
  if (!snapshot) return;
  const now = n.now ?? new Date();
  // a meeting that is over needs no cancellation in anyone's calendar (as the reference does)
  if (n.kind === 'cancelled' && hasEnded(snapshot.event, now)) return;
  const recipients = recipientsOf(n, snapshot);
  if (recipients.length === 0) return;

  if (n.kind === 'updated' || n.kind === 'cancelled') {
    snapshot.event = { ...snapshot.event, ical_sequence: await bumpIcalSequence(trx, n.eventId) };
  }

  const ics = attachment(n.kind, snapshot, recipients, n.config, now);
  const subject = mailSubject(n.kind, snapshot);
  const rows: NewEmailOutboxRow[] = recipients.map((recipient) => ({
    kind: n.kind,
    event_id: n.eventId,
    recipients: [recipient.email],
    subject,
    text: mailText(n.kind, snapshot, recipient, n.config),
    ics,
  }));
  await insertMails(trx, rows);
}

function hasEnded(event: EventRow, now: Date): boolean {
  if (event.is_time_independent) return false;
  const end = event.recurrence_pattern.length > 0 ? event.range_end : event.ends_at;
  return end !== null && end.getTime() < now.getTime();
}

function recipientsOf(n: EventNotification, snapshot: EventSnapshot): MailRecipient[] {
  const known = new Map<string, MailRecipient>();
  for (const i of snapshot.invitees) known.set(i.email.toLowerCase(), { email: i.email, name: i.name, roomInviteCode: i.roomInviteCode });

  let wanted: MailRecipient[];
  if (n.recipients) {
    wanted = n.recipients.map((email) => known.get(email.toLowerCase()) ?? { email, name: '', roomInviteCode: null });
  } else {
    wanted = [...known.values()];
    // the creator's own calendar follows too, except for ad-hoc meetings (reference CHANGELOG #606)
    const toCreator = n.kind === 'created' || n.kind === 'updated' || n.kind === 'cancelled';
    if (toCreator && !snapshot.event.is_adhoc) wanted.unshift({ ...snapshot.creator, roomInviteCode: null });
  }
  const seen = new Set<string>();
  return wanted.filter((r) => {
    const key = r.email.toLowerCase();
    if (!key || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * REQUEST for created/updated/invited, CANCEL for cancelled/uninvited. An uninvite cancels the
 * meeting only for the removed (they are its only ATTENDEEs, RFC 5546 §3.2.5); an invitation lists
 * the new invitee even when the caller queues it before inserting the invite.
 */
function attachment(kind: EventNotificationKind, snapshot: EventSnapshot, recipients: MailRecipient[], config: Config, now: Date): string | null {
  const calendar = calendarEvent(snapshot, config);
  if (!calendar) return null;
  const asAttendee = (r: MailRecipient) => ({ email: r.email, name: r.name || undefined, role: 'user' as const, status: 'pending' as const });
  let attendees: CalendarEvent['attendees'] = calendar.attendees;
  if (kind === 'uninvited') attendees = recipients.map(asAttendee);
  if (kind === 'invited') {
    const listed = new Set(attendees.map((a) => a.email.toLowerCase()));
    attendees = [...attendees, ...recipients.filter((r) => !listed.has(r.email.toLowerCase())).map(asAttendee)];
  }
  const method = kind === 'cancelled' || kind === 'uninvited' ? 'CANCEL' : 'REQUEST';
  return buildCalendar(method, { ...calendar, attendees }, now);
}
