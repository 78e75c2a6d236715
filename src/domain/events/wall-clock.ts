/**
 * Wall-clock time in an IANA zone, computed with Intl only, so nothing depends on the process's TZ.
 * A "wall" value is a millisecond count whose UTC fields are the clock reading in the zone (what
 * rrule calls floating time).
 */

const DAY_MS = 86_400_000;
const formatters = new Map<string, Intl.DateTimeFormat>();

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

/** The zone's UTC offset at an instant, in milliseconds (east of Greenwich is positive). */
export function zoneOffsetMs(zone: string, instantMs: number): number {
  if (zone === 'UTC') return 0;
  const wholeSecond = instantMs - (((instantMs % 1000) + 1000) % 1000);
  const fields: Record<string, string> = {};
  for (const part of formatter(zone).formatToParts(wholeSecond)) fields[part.type] = part.value;
  const year = fields.era === 'BC' ? 1 - Number(fields.year) : Number(fields.year);
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0–99 to the 1900s
  const wall = new Date(0);
  wall.setUTCFullYear(year, Number(fields.month) - 1, Number(fields.day));
  wall.setUTCHours(Number(fields.hour), Number(fields.minute), Number(fields.second), 0);
  return wall.getTime() - wholeSecond;
}

export function instantToWall(instantMs: number, zone: string): number {
  return instantMs + zoneOffsetMs(zone, instantMs);
}

/**
 * The instant a wall-clock reading denotes, with RFC 5545's rules for the two ambiguous cases: a
 * reading inside a gap (spring forward) uses the offset before the gap, so it moves forward by the
 * gap's length; a reading inside an overlap (fall back) is the first, earlier instant.
 */
export function wallToInstant(wallMs: number, zone: string): number {
  // A day either side is past any transition near this reading (offsets differ by < 1 day)
  const offsetBefore = zoneOffsetMs(zone, wallMs - DAY_MS);
  const offsetAfter = zoneOffsetMs(zone, wallMs + DAY_MS);
  const earlier = wallMs - Math.max(offsetBefore, offsetAfter);
  const later = wallMs - Math.min(offsetBefore, offsetAfter);
  if (zoneOffsetMs(zone, earlier) === wallMs - earlier) return earlier;
  if (later !== earlier && zoneOffsetMs(zone, later) === wallMs - later) return later;
  return wallMs - offsetBefore;
}
