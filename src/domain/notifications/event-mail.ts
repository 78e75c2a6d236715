/**
 * The words of an event mail (subject and plain text) and the calendar data of its attachment, from
 * an event snapshot. English only for now; the times are written in the event's own zone, named.
 */
import rrulePkg from 'rrule';
import type { Config } from '../../config/schema.js';
import type { EventExceptionRow } from '../../db/schema.js';
import { scheduleOf } from '../events/event-times.js';
import { DAY_MS } from '../time/zones.js';
import type { EventSnapshot } from './event-snapshot.js';
import type { CalendarEvent, CalendarException, CalendarTimes } from './ics.js';

/** What a change did, as its mail reports it (outbox.ts queues one mail per recipient). */
export type EventNotificationKind = 'created' | 'updated' | 'cancelled' | 'invited' | 'uninvited';

const { rrulestr } = rrulePkg;

export interface MailRecipient {
  email: string;
  name: string;
  /** An external guest's room invite code (and so also the room password), if they have one. */
  roomInviteCode: string | null;
}

const SUBJECT: Record<EventNotificationKind, string> = {
  created: 'New meeting',
  invited: 'Invitation',
  updated: 'Updated meeting',
  cancelled: 'Cancelled meeting',
  uninvited: 'Invitation withdrawn',
};

const LEAD: Record<EventNotificationKind, string> = {
  created: 'has scheduled a meeting',
  invited: 'has invited you to a meeting',
  updated: 'has changed a meeting',
  cancelled: 'has cancelled a meeting',
  uninvited: 'has removed you from a meeting',
};

export function mailSubject(kind: EventNotificationKind, snapshot: EventSnapshot): string {
  return `${SUBJECT[kind]}: ${snapshot.event.title}`;
}

export function mailText(kind: EventNotificationKind, snapshot: EventSnapshot, recipient: MailRecipient, config: Config): string {
  const { event } = snapshot;
  const own = snapshot.actor.email !== '' && snapshot.actor.email.toLowerCase() === recipient.email.toLowerCase();
  const lead = own ? `You ${LEAD[kind].replace(/^has /, 'have ')}` : `${snapshot.actor.name || snapshot.actor.email || 'Someone'} ${LEAD[kind]}`;
  const paragraphs = [`${recipient.name ? `Hello ${recipient.name},` : 'Hello,'}\n\n${lead}.`, [`Title: ${event.title}`, ...whenLines(snapshot)].join('\n')];
  if (event.description) paragraphs.push(event.description);
  if (kind !== 'cancelled' && kind !== 'uninvited') paragraphs.push(joinInfo(snapshot, recipient, config));
  return `${paragraphs.join('\n\n')}\n`;
}

/** The room and call-in details, as DESCRIPTION of the attachment too. */
function joinInfo(snapshot: EventSnapshot, recipient: MailRecipient | undefined, config: Config): string {
  const lines = ['How to join:', `  Room: ${snapshot.event.room_id}`];
  if (recipient?.roomInviteCode) {
    lines.push(`  Invite code: ${recipient.roomInviteCode}`);
    if (snapshot.roomPassword) lines.push(`  Room password: ${snapshot.roomPassword}`);
  }
  if (snapshot.sip && config.call_in.tel) {
    lines.push(`  By phone: ${config.call_in.tel}, call-in id ${snapshot.sip.sipId}, pin ${snapshot.sip.pin}`);
  }
  if (snapshot.sip && config.call_in.uri) lines.push(`  By SIP: ${config.call_in.uri}, call-in id ${snapshot.sip.sipId}, pin ${snapshot.sip.pin}`);
  return lines.join('\n');
}

function whenLines(snapshot: EventSnapshot): string[] {
  const times = eventTimes(snapshot);
  if (!times) return ['When: any time (no fixed date)'];
  const lines = [`When: ${formatRange(times)}`];
  for (const line of snapshot.event.recurrence_pattern) {
    const rule = /^(RRULE:)?FREQ=/i.test(line.trim()) ? line.trim() : undefined;
    if (rule) lines.push(`Repeats: ${describeRule(rule)}`);
  }
  return lines;
}

function describeRule(rule: string): string {
  try {
    return rrulestr(rule.startsWith('RRULE:') ? rule : `RRULE:${rule}`).toText();
  } catch {
    return rule;
  }
}

function formatRange(t: CalendarTimes): string {
  if (t.isAllDay) {
    const format = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', dateStyle: 'full' });
    const lastDay = new Date(Math.max(t.start.getTime(), t.end.getTime() - DAY_MS));
    return `${format.formatRange(t.start, lastDay)} (all day)`;
  }
  const format = new Intl.DateTimeFormat('en-GB', { timeZone: t.startZone, dateStyle: 'full', timeStyle: 'short' });
  return `${format.formatRange(t.start, t.end)} (${t.startZone})`;
}

/** The first occurrence's times; undefined for a time-independent event. */
function eventTimes(snapshot: EventSnapshot): CalendarTimes | undefined {
  // read from the row as the event service reads it (zone defaults included)
  const s = scheduleOf(snapshot.event);
  return s && { isAllDay: s.isAllDay, start: s.startsAt, startZone: s.startsTz, end: s.endsAt, endZone: s.endsTz };
}

/** The calendar data of the attachment; undefined for a time-independent event (nothing to put in a calendar). */
export function calendarEvent(snapshot: EventSnapshot, config: Config): CalendarEvent | undefined {
  const times = eventTimes(snapshot);
  if (!times) return undefined;
  const e = snapshot.event;
  const description = [e.description, joinInfo(snapshot, undefined, config)].filter((part) => part.length > 0).join('\n\n');
  return {
    eventId: e.id,
    title: e.title,
    description,
    location: config.call_in.tel && snapshot.sip ? `${config.call_in.tel} (call-in id ${snapshot.sip.sipId}, pin ${snapshot.sip.pin})` : undefined,
    times,
    pattern: e.recurrence_pattern,
    exceptions: snapshot.exceptions.map((x) => calendarException(x, times)),
    sequence: e.ical_sequence,
    organizer: { email: snapshot.creator.email, name: snapshot.creator.name },
    attendees: snapshot.invitees.map((i) => ({ email: i.email, name: i.name || undefined, role: i.role, status: i.status })),
  };
}

export function calendarException(x: EventExceptionRow, series: CalendarTimes): CalendarException {
  const changed = x.starts_at !== null || x.ends_at !== null || x.is_all_day !== null;
  const duration = series.end.getTime() - series.start.getTime();
  const start = x.starts_at ?? x.instance_start;
  return {
    originalStart: x.instance_start,
    status: x.status,
    title: x.title,
    description: x.description,
    times: changed
      ? {
          isAllDay: x.is_all_day ?? series.isAllDay,
          start,
          startZone: x.starts_at_tz ?? series.startZone,
          end: x.ends_at ?? new Date(start.getTime() + duration),
          endZone: x.ends_at_tz ?? x.starts_at_tz ?? series.endZone,
        }
      : null,
  };
}
