/**
 * The iCalendar attachment of an event mail (RFC 5545, iTIP methods of RFC 5546), and a user's
 * calendar feed (`buildFeed`: many events, no METHOD, each with its own STATUS and DTSTAMP).
 *
 * - METHOD:REQUEST creates or updates the meeting in the recipient's calendar; METHOD:CANCEL with
 *   STATUS:CANCELLED removes it (a cancelled event, or a recipient who was uninvited).
 * - UID is `<event id>@convene` for the event's whole life, so updates and cancellations replace
 *   the entry made by the invitation instead of adding a second one; SEQUENCE grows with every
 *   update (programs ignore an update whose SEQUENCE is lower than the one they hold).
 * - Times: DTSTART/DTEND with a TZID of the event's IANA zone plus a generated VTIMEZONE for every
 *   zone referenced (RFC 5545 requires it and Outlook depends on it), `VALUE=DATE` for all-day
 *   events, `Z` for UTC.
 * - A series carries its RRULE/EXRULE/RDATE/EXDATE lines; a cancelled occurrence becomes an EXDATE,
 *   a changed one an extra VEVENT with the same UID and a RECURRENCE-ID naming the original start.
 */
import { escapeText, formatUtcDateTime, joinLines, paramValue } from './ics-format.js';
import { isUtcZone, recurrenceLines, timeProperty, type TimeForm } from './ics-times.js';
import { vtimezone } from './vtimezone.js';
import { DAY_MS } from '../time/zones.js';

export type IcsMethod = 'REQUEST' | 'CANCEL';

export interface CalendarPerson {
  email: string;
  name?: string;
}

export interface CalendarAttendee extends CalendarPerson {
  /** A moderator chairs the meeting; everyone else is a required participant. */
  role: 'moderator' | 'user' | 'guest';
  status: 'pending' | 'accepted' | 'tentative' | 'declined';
}

export interface CalendarTimes {
  isAllDay: boolean;
  start: Date;
  startZone: string;
  end: Date;
  endZone: string;
}

export interface CalendarException {
  /** The original occurrence's start (its RECURRENCE-ID). */
  originalStart: Date;
  status: 'ok' | 'cancelled';
  title: string | null;
  description: string | null;
  /** The changed times; null keeps the original occurrence's. */
  times: CalendarTimes | null;
}

export interface CalendarEvent {
  eventId: string;
  title: string;
  /** The full DESCRIPTION (the event's text plus how to join). */
  description: string;
  location?: string;
  times: CalendarTimes;
  pattern: readonly string[];
  exceptions: readonly CalendarException[];
  sequence: number;
  organizer: CalendarPerson;
  attendees: readonly CalendarAttendee[];
}

const PARTSTAT = { pending: 'NEEDS-ACTION', accepted: 'ACCEPTED', tentative: 'TENTATIVE', declined: 'DECLINED' } as const;

function eventUid(eventId: string): string {
  return `${eventId}@convene`;
}

/** How one event is written: its STATUS, its DTSTAMP, and whether its changed occurrences are. */
interface EventForm {
  status: 'CONFIRMED' | 'TENTATIVE' | 'CANCELLED';
  stamp: Date;
  withOverrides: boolean;
}

/** The attachment as text: CRLF line endings, folded at 75 octets. */
export function buildCalendar(method: IcsMethod, event: CalendarEvent, now: Date): string {
  const form: EventForm = { status: method === 'CANCEL' ? 'CANCELLED' : 'CONFIRMED', stamp: now, withOverrides: method === 'REQUEST' };
  const { lines, zones } = eventComponents(event, form);
  return calendarObject([`METHOD:${method}`], zones, event.times.start.getUTCFullYear(), lines);
}

/** One event of a published calendar (a feed): its own STATUS and DTSTAMP, its changed occurrences included. */
export interface FeedEntry {
  event: CalendarEvent;
  status: 'CONFIRMED' | 'TENTATIVE';
  /** When the event (or one of its occurrences) last changed. */
  lastModified: Date;
}

/**
 * A published calendar of many events (RFC 5545 without METHOD: no iTIP request, so calendar
 * programs show the events instead of offering to answer them). `header` comes after the fixed
 * properties (name, refresh interval); the VTIMEZONEs follow the rules of `zoneYear`.
 */
export function buildFeed(entries: readonly FeedEntry[], header: readonly string[], zoneYear: number): string {
  const zones = new Set<string>();
  const lines: string[] = [];
  for (const entry of entries) {
    const built = eventComponents(entry.event, { status: entry.status, stamp: entry.lastModified, withOverrides: true });
    lines.push(...built.lines);
    for (const zone of built.zones) zones.add(zone);
  }
  return calendarObject(header, zones, zoneYear, lines);
}

function calendarObject(header: readonly string[], zones: ReadonlySet<string>, zoneYear: number, events: readonly string[]): string {
  return joinLines([
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//Convene//Convene Meetings//EN',
    'CALSCALE:GREGORIAN',
    ...header,
    ...[...zones].sort().flatMap((zone) => vtimezone(zone, zoneYear)),
    ...events,
    'END:VCALENDAR',
  ]);
}

/** The event's VEVENTs (the series, then its changed occurrences) and the zones they name. */
function eventComponents(event: CalendarEvent, form: EventForm): { lines: string[]; zones: Set<string> } {
  const series: TimeForm = { isAllDay: event.times.isAllDay, zone: event.times.startZone };
  const isSeries = event.pattern.length > 0;
  const overrides = form.withOverrides && isSeries ? event.exceptions.filter((e) => e.status === 'ok') : [];
  const cancelled = isSeries ? event.exceptions.filter((e) => e.status === 'cancelled') : [];

  const master = [
    ...common(event, form),
    ...times(event.times),
    ...(isSeries ? recurrenceLines(event.pattern, series, event.times.start) : []),
    ...(cancelled.length > 0
      ? [
          timeProperty(
            'EXDATE',
            cancelled.map((e) => e.originalStart),
            series,
          ),
        ]
      : []),
    `SUMMARY:${escapeText(event.title)}`,
    ...describe(event.description, event.location),
  ];
  const overrideEvents = overrides.map((exception) => [
    ...common(event, form),
    timeProperty('RECURRENCE-ID', [exception.originalStart], series),
    ...times(exception.times ?? shifted(event.times, exception.originalStart)),
    `SUMMARY:${escapeText(exception.title ?? event.title)}`,
    ...describe(exception.description ?? event.description, event.location),
  ]);

  const zones = new Set<string>();
  for (const t of [event.times, ...overrides.map((e) => e.times)]) {
    if (t && !t.isAllDay) for (const zone of [t.startZone, t.endZone]) if (!isUtcZone(zone)) zones.add(zone);
  }
  return { lines: [master, ...overrideEvents].flatMap((lines) => ['BEGIN:VEVENT', ...lines, 'END:VEVENT']), zones };
}

function common(event: CalendarEvent, form: EventForm): string[] {
  return [
    `UID:${eventUid(event.eventId)}`,
    `DTSTAMP:${formatUtcDateTime(form.stamp)}`,
    `SEQUENCE:${event.sequence}`,
    `STATUS:${form.status}`,
    `ORGANIZER${event.organizer.name ? `;CN=${paramValue(event.organizer.name)}` : ''}:mailto:${event.organizer.email}`,
    ...event.attendees.map(
      (a) =>
        `ATTENDEE;CUTYPE=INDIVIDUAL;ROLE=${a.role === 'moderator' ? 'CHAIR' : 'REQ-PARTICIPANT'};PARTSTAT=${PARTSTAT[a.status]}` +
        `${a.name ? `;CN=${paramValue(a.name)}` : ''}:mailto:${a.email}`,
    ),
  ];
}

function times(t: CalendarTimes): string[] {
  return [
    timeProperty('DTSTART', [t.start], { isAllDay: t.isAllDay, zone: t.startZone }),
    timeProperty('DTEND', [endOf(t)], { isAllDay: t.isAllDay, zone: t.endZone }),
  ];
}

/** An all-day DTEND is exclusive: an event that ends on the day it starts ends the day after. */
function endOf(t: CalendarTimes): Date {
  if (t.isAllDay && t.end.getTime() < t.start.getTime() + DAY_MS) return new Date(t.start.getTime() + DAY_MS);
  return t.end;
}

/** The times of an unchanged occurrence starting at `start`. */
function shifted(t: CalendarTimes, start: Date): CalendarTimes {
  return { ...t, start, end: new Date(start.getTime() + (t.end.getTime() - t.start.getTime())) };
}

function describe(description: string, location: string | undefined): string[] {
  return [...(description ? [`DESCRIPTION:${escapeText(description)}`] : []), ...(location ? [`LOCATION:${escapeText(location)}`] : [])];
}
