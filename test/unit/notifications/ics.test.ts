/**
 * The calendar attachment, read back by ical.js: methods, identity, zoned and all-day times, and
 * the occurrences of a series (with its EXDATEs, cancelled and moved occurrences) as ical.js
 * expands them, compared with the wall-clock times the meeting was planned at.
 */
import ICAL from 'ical.js';
import { describe, expect, it } from 'vitest';
import { occurrences as expandSeries } from '../../../src/domain/events/recurrence.js';
import { buildCalendar, type CalendarEvent } from '../../../src/domain/notifications/ics.js';
import { parseCalendar } from '../../support/notifications.js';

const NOW = new Date('2029-12-01T08:00:00Z');

function event(overrides: Partial<CalendarEvent> = {}): CalendarEvent {
  return {
    eventId: '6f1c5a8e-8f7b-4d55-9a67-0d1f3b1b2c3d',
    title: 'Weekly planning',
    description: 'Plans for the week.',
    times: {
      isAllDay: false,
      start: new Date('2030-01-07T09:00:00Z'), // Monday 10:00 in Berlin
      startZone: 'Europe/Berlin',
      end: new Date('2030-01-07T10:00:00Z'),
      endZone: 'Europe/Berlin',
    },
    pattern: [],
    exceptions: [],
    sequence: 0,
    organizer: { email: 'ada@example.test', name: 'Ada Lovelace' },
    attendees: [
      { email: 'bob@example.test', name: 'Bob, the Builder', role: 'user', status: 'accepted' },
      { email: 'guest@example.org', role: 'guest', status: 'pending' },
      { email: 'mo@example.test', name: 'Mo', role: 'moderator', status: 'declined' },
    ],
    ...overrides,
  };
}

/** Every occurrence start ical.js expands (exceptions applied), until `until`, as ISO strings. */
function occurrences(ics: string, until: string): string[] {
  const { events } = parseCalendar(ics);
  const [master, ...overrides] = events;
  for (const override of overrides) master!.relateException(override);
  const out: string[] = [];
  const iterator = master!.iterator();
  for (let next = iterator.next(); next && next.toJSDate() < new Date(until); next = iterator.next()) {
    out.push(master!.getOccurrenceDetails(next).startDate.toJSDate().toISOString());
  }
  return out;
}

describe('buildCalendar', () => {
  it('writes a single event as REQUEST with a stable UID, its zone, organizer and attendees', () => {
    const ics = buildCalendar('REQUEST', event({ sequence: 3 }), NOW);
    expect(ics).toMatch(/\r\n$/);
    expect(ics.replace(/\r\n/g, '')).not.toMatch(/\n/);
    expect(ics).toContain('DTSTART;TZID=Europe/Berlin:20300107T100000\r\n');
    expect(ics).toContain('BEGIN:VTIMEZONE\r\nTZID:Europe/Berlin\r\n');

    const { method, events, component } = parseCalendar(ics);
    expect(method).toBe('REQUEST');
    expect(component.getFirstPropertyValue('version')).toBe('2.0');
    expect(events).toHaveLength(1);
    const [vevent] = events;
    expect(vevent!.uid).toBe('6f1c5a8e-8f7b-4d55-9a67-0d1f3b1b2c3d@convene');
    expect(vevent!.sequence).toBe(3);
    expect(vevent!.summary).toBe('Weekly planning');
    expect(vevent!.startDate.toJSDate().toISOString()).toBe('2030-01-07T09:00:00.000Z');
    expect(vevent!.endDate.toJSDate().toISOString()).toBe('2030-01-07T10:00:00.000Z');
    expect(vevent!.component.getFirstPropertyValue('status')).toBe('CONFIRMED');
    expect(vevent!.component.getFirstPropertyValue('dtstamp')!.toString()).toBe('2029-12-01T08:00:00Z');

    const organizer = vevent!.component.getFirstProperty('organizer')!;
    expect(organizer.getFirstValue()).toBe('mailto:ada@example.test');
    expect(organizer.getParameter('cn')).toBe('Ada Lovelace');
    const attendees = vevent!.attendees.map((a) => ({
      to: a.getFirstValue(),
      cn: a.getParameter('cn'),
      role: a.getParameter('role'),
      partstat: a.getParameter('partstat'),
    }));
    expect(attendees).toEqual([
      { to: 'mailto:bob@example.test', cn: 'Bob, the Builder', role: 'REQ-PARTICIPANT', partstat: 'ACCEPTED' },
      { to: 'mailto:guest@example.org', cn: undefined, role: 'REQ-PARTICIPANT', partstat: 'NEEDS-ACTION' },
      { to: 'mailto:mo@example.test', cn: 'Mo', role: 'CHAIR', partstat: 'DECLINED' },
    ]);
  });

  it('keeps text intact through escaping and folding', () => {
    const title = 'Plan; review, and "ship" \\ it — Grüße 😀 '.repeat(4).trim();
    const description = 'Line one\nLine two; with, punctuation\\\n\nLast: done';
    const ics = buildCalendar('REQUEST', event({ title, description, location: 'Room 1, floor 2' }), NOW);
    for (const line of ics.split('\r\n')) expect(Buffer.byteLength(line, 'utf8')).toBeLessThanOrEqual(75);
    const [vevent] = parseCalendar(ics).events;
    expect(vevent!.summary).toBe(title);
    expect(vevent!.description).toBe(description);
    expect(vevent!.location).toBe('Room 1, floor 2');
  });

  it('writes CANCEL with STATUS:CANCELLED and no overrides', () => {
    const ics = buildCalendar(
      'CANCEL',
      event({
        sequence: 4,
        pattern: ['RRULE:FREQ=WEEKLY;COUNT=3'],
        exceptions: [{ originalStart: new Date('2030-01-14T09:00:00Z'), status: 'ok', title: 'Moved', description: null, times: null }],
      }),
      NOW,
    );
    const { method, events } = parseCalendar(ics);
    expect(method).toBe('CANCEL');
    expect(events).toHaveLength(1);
    expect(events[0]!.component.getFirstPropertyValue('status')).toBe('CANCELLED');
    expect(events[0]!.sequence).toBe(4);
  });

  it('keeps a weekly 10:00 Berlin meeting at 10:00 local across the change to summer time', () => {
    const ics = buildCalendar('REQUEST', event({ pattern: ['RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=14'] }), NOW);
    expect(ics).toContain('RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=14\r\n');
    const starts = occurrences(ics, '2031-01-01');
    expect(starts).toHaveLength(14);
    // summer time starts on Sunday 31 March 2030: 10:00 is 09:00 UTC before, 08:00 UTC after
    expect(starts.slice(10, 14)).toEqual(['2030-03-18T09:00:00.000Z', '2030-03-25T09:00:00.000Z', '2030-04-01T08:00:00.000Z', '2030-04-08T08:00:00.000Z']);
  });

  it('writes stored EXDATE/RDATE lines of any form in the DTSTART form and applies cancelled and moved occurrences', () => {
    const ics = buildCalendar(
      'REQUEST',
      event({
        pattern: [
          'FREQ=WEEKLY;UNTIL=20300204T235959', // no RRULE: prefix, local UNTIL
          'EXDATE:20300114T090000Z', // UTC
          'EXDATE;TZID=America/New_York:20300121T040000', // another zone: 10:00 Berlin
          'RDATE:20300110T150000', // floating: the event's zone
        ],
        exceptions: [
          { originalStart: new Date('2030-01-28T09:00:00Z'), status: 'cancelled', title: null, description: null, times: null },
          {
            originalStart: new Date('2030-02-04T09:00:00Z'),
            status: 'ok',
            title: 'Planning (moved)',
            description: null,
            times: {
              isAllDay: false,
              start: new Date('2030-02-05T13:00:00Z'),
              startZone: 'America/New_York',
              end: new Date('2030-02-05T14:00:00Z'),
              endZone: 'America/New_York',
            },
          },
        ],
      }),
      NOW,
    );
    expect(ics).toContain('RRULE:FREQ=WEEKLY;UNTIL=20300204T225959Z\r\n');
    expect(ics).toContain('EXDATE;TZID=Europe/Berlin:20300114T100000\r\n');
    expect(ics).toContain('EXDATE;TZID=Europe/Berlin:20300121T100000\r\n');
    expect(ics).toContain('RDATE;TZID=Europe/Berlin:20300110T150000\r\n');
    expect(ics).toContain('EXDATE;TZID=Europe/Berlin:20300128T100000\r\n');
    expect(ics).toContain('RECURRENCE-ID;TZID=Europe/Berlin:20300204T100000\r\n');
    expect(ics).toContain('DTSTART;TZID=America/New_York:20300205T080000\r\n');
    expect(ics).toContain('BEGIN:VTIMEZONE\r\nTZID:America/New_York\r\n');

    expect(occurrences(ics, '2030-03-01')).toEqual(['2030-01-07T09:00:00.000Z', '2030-01-10T14:00:00.000Z', '2030-02-05T13:00:00.000Z']);
    const { events } = parseCalendar(ics);
    expect(events[1]!.summary).toBe('Planning (moved)');
    expect(events[1]!.uid).toBe(events[0]!.uid);
  });

  it("reads a date EXDATE of a timed series as that day's occurrence, and a date UNTIL as the end of that day", () => {
    const ics = buildCalendar('REQUEST', event({ pattern: ['RRULE:FREQ=DAILY;UNTIL=20300110', 'EXDATE;VALUE=DATE:20300108'] }), NOW);
    expect(ics).toContain('RRULE:FREQ=DAILY;UNTIL=20300110T225959Z\r\n');
    expect(ics).toContain('EXDATE;TZID=Europe/Berlin:20300108T100000\r\n');
    expect(occurrences(ics, '2030-02-01')).toEqual(['2030-01-07T09:00:00.000Z', '2030-01-09T09:00:00.000Z', '2030-01-10T09:00:00.000Z']);
  });

  it('writes all-day events as dates with an exclusive end, and their series in dates', () => {
    const ics = buildCalendar(
      'REQUEST',
      event({
        times: {
          isAllDay: true,
          start: new Date('2030-03-29T00:00:00Z'),
          startZone: 'Europe/Berlin',
          end: new Date('2030-03-29T00:00:00Z'),
          endZone: 'Europe/Berlin',
        },
        pattern: ['RRULE:FREQ=DAILY;UNTIL=20300402T000000Z', 'EXDATE:20300331T000000Z'],
      }),
      NOW,
    );
    expect(ics).toContain('DTSTART;VALUE=DATE:20300329\r\n');
    expect(ics).toContain('DTEND;VALUE=DATE:20300330\r\n');
    expect(ics).toContain('RRULE:FREQ=DAILY;UNTIL=20300402\r\n');
    expect(ics).toContain('EXDATE;VALUE=DATE:20300331\r\n');
    expect(ics).not.toContain('BEGIN:VTIMEZONE');
    const { events } = parseCalendar(ics);
    const iterator = events[0]!.iterator();
    const dates: string[] = [];
    for (let next = iterator.next(); next; next = iterator.next()) dates.push(next.toString());
    expect(dates).toEqual(['2030-03-29', '2030-03-30', '2030-04-01', '2030-04-02']);
    expect(events[0]!.startDate.isDate).toBe(true);
  });

  it('writes the dates of an all-day series as written, whatever zone its values carry, as the instance expansion reads them', () => {
    const times = {
      isAllDay: true,
      start: new Date('2030-03-29T00:00:00Z'),
      startZone: 'Europe/Berlin',
      end: new Date('2030-03-29T00:00:00Z'),
      endZone: 'Europe/Berlin',
    };
    // 00:30 Berlin and 10:00 Auckland are both on the day before in UTC
    const pattern = ['RRULE:FREQ=DAILY;UNTIL=20300403T003000', 'EXDATE:20300331T003000', 'RDATE;TZID=Pacific/Auckland:20300410T100000'];
    const ics = buildCalendar('REQUEST', event({ times, pattern }), NOW);
    expect(ics).toContain('RRULE:FREQ=DAILY;UNTIL=20300403\r\n');
    expect(ics).toContain('EXDATE;VALUE=DATE:20300331\r\n');
    expect(ics).toContain('RDATE;VALUE=DATE:20300410\r\n');
    const expanded = expandSeries({ start: times.start, timezone: times.startZone, isAllDay: true, pattern }, { durationMs: 0, limit: 10 });
    expect(expanded.map((date) => date.toISOString().slice(0, 10).replace(/-/g, ''))).toEqual([
      '20300329',
      '20300330',
      '20300401',
      '20300402',
      '20300403',
      '20300410',
    ]);
  });

  it('writes UTC events with Z and no VTIMEZONE', () => {
    const ics = buildCalendar('REQUEST', event({ times: { ...event().times, startZone: 'UTC', endZone: 'Etc/UTC' } }), NOW);
    expect(ics).toContain('DTSTART:20300107T090000Z\r\n');
    expect(ics).toContain('DTEND:20300107T100000Z\r\n');
    expect(ics).not.toContain('VTIMEZONE');
    expect(ICAL.parse(ics)).toBeTruthy();
  });
});
