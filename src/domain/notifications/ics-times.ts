/**
 * Date and date-time values of an event's calendar attachment, and its recurrence lines rewritten
 * into the form of its DTSTART.
 *
 * RFC 5545 §3.8.5.1 wants EXDATE/RDATE values of the same type as DTSTART, and §3.3.10 an UNTIL of
 * DATE with a DATE start and in UTC with a zoned one. Stored patterns may be written in any form
 * (UTC, TZID, floating, VALUE=DATE), as the instance expansion accepts them; the values are read
 * the way it reads them (floating = the event's zone) and written in the DTSTART's form, so every
 * calendar program expands the same occurrences.
 */
import { readPatternLines } from '../events/recurrence.js';
import type { RuleSpec } from '../events/recurrence-lines.js';
import { formatDate, formatLocalDateTime, formatUtcDateTime } from './ics-format.js';
import { isKnownTimeZone, localTimeAt, wallFields } from '../time/zones.js';

/** How an event's times are written: all-day dates, or date-times in a zone (UTC written with `Z`). */
export interface TimeForm {
  isAllDay: boolean;
  zone: string;
}

const UTC_ZONES = new Set(['UTC', 'Etc/UTC', 'GMT', 'Etc/GMT', 'Etc/UCT', 'UCT', 'Zulu', 'Etc/Zulu', 'Universal', 'Etc/Universal']);

/** Zones written with `Z` instead of a TZID (and so needing no VTIMEZONE). */
export function isUtcZone(zone: string): boolean {
  return UTC_ZONES.has(zone) || !isKnownTimeZone(zone);
}

/**
 * A property with a date or date-time value, e.g. `DTSTART;TZID=Europe/Berlin:20260105T100000`.
 * All-day values are the UTC date (all-day events are stored at 00:00 UTC of their dates).
 */
export function timeProperty(name: string, instants: readonly Date[], form: TimeForm): string {
  if (form.isAllDay) return `${name};VALUE=DATE:${instants.map((t) => formatDate(wallFields(t.getTime()))).join(',')}`;
  if (isUtcZone(form.zone)) return `${name}:${instants.map(formatUtcDateTime).join(',')}`;
  return `${name};TZID=${form.zone}:${instants.map((t) => formatLocalDateTime(localTimeAt(form.zone, t))).join(',')}`;
}

/**
 * The event's recurrence lines (RRULE, EXRULE, RDATE, EXDATE) in the form of its DTSTART, their
 * dates read by the instance expansion itself (`readPatternLines`). Lines that do not parse are left
 * out: the event service validated them, and a broken line would make calendar programs reject the
 * whole invitation.
 */
export function recurrenceLines(pattern: readonly string[], form: TimeForm, start: Date): string[] {
  // a zone written with Z reads its floating values in UTC (an unknown one included)
  const timezone = isUtcZone(form.zone) ? 'UTC' : form.zone;
  return readPatternLines({ start, timezone, isAllDay: form.isAllDay, pattern }).map((line) =>
    'spec' in line
      ? `${line.name}:${ruleValue(line.spec, line.untilInstant, form)}`
      : timeProperty(
          line.name,
          line.instants.map((instant) => new Date(instant)),
          form,
        ),
  );
}

/** The rule's parts as written (upper case), with UNTIL a DATE for an all-day series and in UTC otherwise. */
function ruleValue(spec: RuleSpec, untilInstant: number | undefined, form: TimeForm): string {
  const line = spec.source.trim();
  const value = /^FREQ=/i.test(line) ? line : line.slice(line.indexOf(':') + 1);
  return value
    .split(';')
    .filter((part) => part.length > 0)
    .map((part) => {
      if (part.split('=')[0]!.toUpperCase() !== 'UNTIL' || untilInstant === undefined) return part.toUpperCase();
      // a date-only UNTIL of a timed series is the end of that day in the event's zone (to the second)
      return `UNTIL=${form.isAllDay ? formatDate(wallFields(untilInstant)) : formatUtcDateTime(new Date(untilInstant))}`;
    })
    .join(';');
}
