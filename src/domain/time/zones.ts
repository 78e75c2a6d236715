/**
 * Wall-clock time in IANA zones, computed with Intl only, so nothing depends on the process's TZ.
 * The one implementation for recurrence expansion and for mails / calendar attachments, so both
 * name the same local times.
 *
 * A "wall" value is a millisecond count whose UTC fields are the clock reading in the zone (what
 * rrule calls floating time); `LocalTime` is the same reading as fields.
 */

export const DAY_MS = 86_400_000;
const formatters = new Map<string, Intl.DateTimeFormat>();

/** A wall-clock time; `month` 1–12. */
export interface LocalTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function formatter(zone: string): Intl.DateTimeFormat {
  let format = formatters.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, format);
  }
  return format;
}

/** Whether Intl knows the zone (a name it rejects would make every conversion throw). */
export function isKnownTimeZone(zone: string): boolean {
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
}

/**
 * Offsets already asked for, by zone and whole second: one `formatToParts` costs microseconds, and
 * a series' expansion asks for the same instants on every listing of it. The zone data does not
 * change while the process runs, so an entry is never stale; the map is emptied when it is full.
 */
const offsetCache = new Map<string, number>();
const OFFSET_CACHE_SIZE = 20_000; // about 2 MB

/** The zone's UTC offset at an instant, in milliseconds (east of Greenwich is positive). */
function zoneOffsetMs(zone: string, instantMs: number): number {
  if (zone === 'UTC') return 0;
  const wholeSecond = instantMs - (((instantMs % 1000) + 1000) % 1000);
  const key = `${zone} ${wholeSecond}`;
  let offset = offsetCache.get(key);
  if (offset === undefined) {
    if (offsetCache.size >= OFFSET_CACHE_SIZE) offsetCache.clear();
    offset = formattedOffsetMs(zone, wholeSecond);
    offsetCache.set(key, offset);
  }
  return offset;
}

function formattedOffsetMs(zone: string, wholeSecond: number): number {
  const fields: Record<string, string> = {};
  for (const part of formatter(zone).formatToParts(wholeSecond)) fields[part.type] = part.value;
  const year = fields.era === 'BC' ? 1 - Number(fields.year) : Number(fields.year);
  const [month, day, hour, minute, second] = [fields.month, fields.day, fields.hour, fields.minute, fields.second].map(Number);
  return wallMs({ year, month: month!, day: day!, hour: hour!, minute: minute!, second: second! }) - wholeSecond;
}

export function instantToWall(instantMs: number, zone: string): number {
  return instantMs + zoneOffsetMs(zone, instantMs);
}

/**
 * The instant a wall-clock reading denotes, with RFC 5545's rules for the two ambiguous cases: a
 * reading inside a gap (spring forward) uses the offset before the gap, so it moves forward by the
 * gap's length (02:30 becomes 03:30 summer time); a reading inside an overlap (fall back) is the
 * first, earlier instant.
 */
export function wallToInstant(wall: number, zone: string): number {
  // A day either side is past any transition near this reading (offsets differ by < 1 day)
  const offsetBefore = zoneOffsetMs(zone, wall - DAY_MS);
  const offsetAfter = zoneOffsetMs(zone, wall + DAY_MS);
  const earlier = wall - Math.max(offsetBefore, offsetAfter);
  const later = wall - Math.min(offsetBefore, offsetAfter);
  if (zoneOffsetMs(zone, earlier) === wall - earlier) return earlier;
  if (later !== earlier && zoneOffsetMs(zone, later) === wall - later) return later;
  return wall - offsetBefore;
}

/**
 * The fields as a wall value (a missing time of day is 00:00:00; out-of-range fields roll over, as
 * with Date). setUTCFullYear, not Date.UTC: Date.UTC maps years 0–99 to the 1900s.
 */
export function wallMs(local: Pick<LocalTime, 'year' | 'month' | 'day'> & Partial<LocalTime>): number {
  const wall = new Date(0);
  wall.setUTCFullYear(local.year, local.month - 1, local.day);
  wall.setUTCHours(local.hour ?? 0, local.minute ?? 0, local.second ?? 0, 0);
  return wall.getTime();
}

/** The fields of a wall value; of an instant, they are its UTC fields (the identity zone). */
export function wallFields(wall: number): LocalTime {
  const t = new Date(wall);
  return {
    year: t.getUTCFullYear(),
    month: t.getUTCMonth() + 1,
    day: t.getUTCDate(),
    hour: t.getUTCHours(),
    minute: t.getUTCMinutes(),
    second: t.getUTCSeconds(),
  };
}

/** The wall-clock time in `zone` at an instant. */
export function localTimeAt(zone: string, instant: Date): LocalTime {
  return wallFields(instantToWall(instant.getTime(), zone));
}

/** The instant of a wall-clock time in `zone` (gaps and overlaps as in `wallToInstant`). */
export function instantOf(zone: string, local: LocalTime): Date {
  return new Date(wallToInstant(wallMs(local), zone));
}

/** The zone's UTC offset at an instant, in whole seconds (east positive), as iCalendar writes it. */
export function offsetSeconds(zone: string, instant: Date): number {
  return zoneOffsetMs(zone, instant.getTime()) / 1000;
}
