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
import { formatDate, formatLocalDateTime, formatUtcDateTime } from './ics-format.js';
import { instantOf, isKnownTimeZone, localTimeAt, wallFields, wallMs, type LocalTime } from '../time/zones.js';

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
 * The event's recurrence lines (RRULE, EXRULE, RDATE, EXDATE) in the form of its DTSTART. Lines that
 * do not parse are left out: the event service validated them, and a broken line would make
 * calendar programs reject the whole invitation.
 */
export function recurrenceLines(pattern: readonly string[], form: TimeForm, start: Date): string[] {
  const lines: string[] = [];
  for (const raw of pattern) {
    const line = raw.trim();
    const colon = line.indexOf(':');
    const head = colon < 0 || /^FREQ=/i.test(line) ? 'RRULE' : line.slice(0, colon);
    const value = colon < 0 || /^FREQ=/i.test(line) ? line : line.slice(colon + 1);
    const [name, ...params] = head.split(';');
    const upper = name!.toUpperCase();
    if (upper === 'RRULE' || upper === 'EXRULE') {
      const rule = normaliseUntil(value, form);
      if (rule) lines.push(`${upper}:${rule}`);
    } else if (upper === 'RDATE' || upper === 'EXDATE') {
      const instants = dateValues(value, params, form, start);
      if (instants && instants.length > 0) lines.push(timeProperty(upper, instants, form));
    }
  }
  return lines;
}

function normaliseUntil(rule: string, form: TimeForm): string | undefined {
  const parts = rule.split(';').filter((part) => part.length > 0);
  const out: string[] = [];
  for (const part of parts) {
    const [key, value = ''] = part.split('=');
    if (key!.toUpperCase() !== 'UNTIL') {
      out.push(part.toUpperCase());
      continue;
    }
    const parsed = parseValue(value, undefined, form.zone);
    if (!parsed) return undefined;
    if (form.isAllDay) {
      out.push(`UNTIL=${'date' in parsed ? parsed.date : formatDate(wallFields(parsed.instant.getTime()))}`);
    } else {
      // a date-only UNTIL includes that whole day in the event's zone
      const until = 'date' in parsed ? instantOf(form.zone, { ...dateFields(parsed.date), hour: 23, minute: 59, second: 59 }) : parsed.instant;
      out.push(`UNTIL=${formatUtcDateTime(until)}`);
    }
  }
  return out.join(';');
}

/** RDATE/EXDATE values as instants of the event's form (dates as 00:00 UTC, as all-day events are stored). */
function dateValues(value: string, params: string[], form: TimeForm, start: Date): Date[] | undefined {
  const tzid = params.map((p) => /^TZID=(.+)$/i.exec(p)?.[1]?.replace(/^"|"$/g, '')).find((z) => z !== undefined);
  if (params.some((p) => /^VALUE=PERIOD$/i.test(p))) return undefined;
  const instants: Date[] = [];
  for (const item of value.split(',')) {
    const parsed = parseValue(item.trim(), tzid, form.zone);
    if (!parsed) return undefined;
    if ('instant' in parsed) instants.push(form.isAllDay ? startOfUtcDay(parsed.instant) : parsed.instant);
    else if (form.isAllDay) instants.push(new Date(Date.UTC(...ymd(parsed.date))));
    else {
      // a date in a timed series names the occurrence of that day, at the series' time of day
      if (isUtcZone(form.zone)) {
        instants.push(new Date(Date.UTC(...ymd(parsed.date), start.getUTCHours(), start.getUTCMinutes(), start.getUTCSeconds())));
      } else {
        instants.push(instantOf(form.zone, { ...localTimeAt(form.zone, start), ...dateFields(parsed.date) }));
      }
    }
  }
  return instants;
}

type ParsedValue = { date: string } | { instant: Date };

/** `YYYYMMDD`, `YYYYMMDDTHHMMSSZ`, or a local `YYYYMMDDTHHMMSS` in `tzid` (else the event's zone). */
function parseValue(text: string, tzid: string | undefined, eventZone: string): ParsedValue | undefined {
  if (/^\d{8}$/.test(text)) return { date: text };
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(Z?)$/i.exec(text);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s, z] = match.map(String) as [string, string, string, string, string, string, string, string];
  const local: LocalTime = { year: +y, month: +mo, day: +d, hour: +h, minute: +mi, second: +s };
  const zone = tzid && isKnownTimeZone(tzid) ? tzid : eventZone;
  if (z || isUtcZone(zone)) return { instant: new Date(wallMs(local)) };
  return { instant: instantOf(zone, local) };
}

const ymd = (date: string): [number, number, number] => [+date.slice(0, 4), +date.slice(4, 6) - 1, +date.slice(6, 8)];

function dateFields(date: string): Pick<LocalTime, 'year' | 'month' | 'day'> {
  return { year: +date.slice(0, 4), month: +date.slice(4, 6), day: +date.slice(6, 8) };
}

function startOfUtcDay(instant: Date): Date {
  return new Date(Date.UTC(instant.getUTCFullYear(), instant.getUTCMonth(), instant.getUTCDate()));
}
