/**
 * An independent expansion of recurrence patterns with ical.js, for checking recurrence.ts. The
 * zones are hand-written VTIMEZONEs with today's DST rules (ical.js ships no zone data), so the
 * oracle shares neither rrule nor Intl with the code under test.
 */
import ICAL from 'ical.js';

const VTIMEZONES: Record<string, string> = {
  'Europe/Berlin': `BEGIN:VTIMEZONE
TZID:Europe/Berlin
BEGIN:DAYLIGHT
TZOFFSETFROM:+0100
TZOFFSETTO:+0200
TZNAME:CEST
DTSTART:19700329T020000
RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU
END:DAYLIGHT
BEGIN:STANDARD
TZOFFSETFROM:+0200
TZOFFSETTO:+0100
TZNAME:CET
DTSTART:19701025T030000
RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU
END:STANDARD
END:VTIMEZONE`,
  'America/New_York': `BEGIN:VTIMEZONE
TZID:America/New_York
BEGIN:DAYLIGHT
TZOFFSETFROM:-0500
TZOFFSETTO:-0400
TZNAME:EDT
DTSTART:20070311T020000
RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU
END:DAYLIGHT
BEGIN:STANDARD
TZOFFSETFROM:-0400
TZOFFSETTO:-0500
TZNAME:EST
DTSTART:20071104T020000
RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU
END:STANDARD
END:VTIMEZONE`,
  'Australia/Sydney': `BEGIN:VTIMEZONE
TZID:Australia/Sydney
BEGIN:STANDARD
TZOFFSETFROM:+1100
TZOFFSETTO:+1000
TZNAME:AEST
DTSTART:20080406T030000
RRULE:FREQ=YEARLY;BYMONTH=4;BYDAY=1SU
END:STANDARD
BEGIN:DAYLIGHT
TZOFFSETFROM:+1000
TZOFFSETTO:+1100
TZNAME:AEDT
DTSTART:20081005T020000
RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=1SU
END:DAYLIGHT
END:VTIMEZONE`,
};

for (const text of Object.values(VTIMEZONES)) {
  const component = new ICAL.Component(ICAL.parse(`BEGIN:VCALENDAR\n${text}\nEND:VCALENDAR`)).getFirstSubcomponent('vtimezone')!;
  ICAL.TimezoneService.register(new ICAL.Timezone(component));
}

export interface OracleInput {
  zone: string;
  /** Local DTSTART as written in iCalendar: `YYYYMMDDTHHMMSS`, or `YYYYMMDD` for an all-day event. */
  dtstart: string;
  lines: string[];
}

/** The first `max` occurrence starts (ms) and the start instant, as ical.js sees them. */
export function icalExpand(input: OracleInput, max: number): { start: number; starts: number[] } {
  const allDay = !input.dtstart.includes('T');
  const dtstart = allDay
    ? `DTSTART;VALUE=DATE:${input.dtstart}`
    : input.zone === 'UTC'
      ? `DTSTART:${input.dtstart}Z`
      : `DTSTART;TZID=${input.zone}:${input.dtstart}`;
  const ics = ['BEGIN:VCALENDAR', 'BEGIN:VEVENT', 'UID:oracle', dtstart, ...input.lines, 'END:VEVENT', 'END:VCALENDAR'].join('\r\n');
  const event = new ICAL.Event(new ICAL.Component(ICAL.parse(ics)).getFirstSubcomponent('vevent')!);
  const instant = (time: ICAL.Time) => (time.isDate ? Date.UTC(time.year, time.month - 1, time.day) : time.toUnixTime() * 1000);
  const iterator = event.iterator();
  const starts: number[] = [];
  for (let next = iterator.next(); next && starts.length < max; next = iterator.next()) starts.push(instant(next));
  return { start: instant(event.startDate), starts };
}
