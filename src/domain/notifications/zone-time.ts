/**
 * Wall-clock arithmetic in IANA time zones through the runtime's own tz database (Intl), so that
 * mails and calendar attachments name the same local times the instance expansion uses.
 */

/** A wall-clock time; `month` 1–12. */
export interface LocalTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(zone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(zone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, formatter);
  }
  return formatter;
}

/** Whether the runtime knows the zone (an unknown one makes Intl throw). */
export function isKnownZone(zone: string): boolean {
  try {
    formatterFor(zone);
    return true;
  } catch {
    return false;
  }
}

/** The wall-clock time in `zone` at an instant. */
export function localTimeAt(zone: string, instant: Date): LocalTime {
  const parts: Record<string, number> = {};
  for (const part of formatterFor(zone).formatToParts(instant)) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  return {
    year: parts.year!,
    month: parts.month!,
    day: parts.day!,
    hour: parts.hour!,
    minute: parts.minute!,
    second: parts.second!,
  };
}

/** The zone's UTC offset at an instant, in seconds (east positive). */
export function offsetSeconds(zone: string, instant: Date): number {
  const wholeSecond = Math.floor(instant.getTime() / 1000) * 1000;
  return (asUtcMs(localTimeAt(zone, new Date(wholeSecond))) - wholeSecond) / 1000;
}

/**
 * The instant of a wall-clock time in `zone`. A time skipped by a forward change resolves to the
 * offset before the change (02:30 on a spring-forward night is 03:30 summer time); a repeated time
 * resolves to its first occurrence.
 */
export function instantOf(zone: string, local: LocalTime): Date {
  const wall = asUtcMs(local);
  const before = offsetSeconds(zone, new Date(wall - 86_400_000));
  const after = offsetSeconds(zone, new Date(wall + 86_400_000));
  const first = wall - Math.max(before, after) * 1000;
  if (offsetSeconds(zone, new Date(first)) === Math.max(before, after)) return new Date(first);
  return new Date(wall - Math.min(before, after) * 1000);
}

/** The wall-clock fields read as if they were UTC, in milliseconds. */
export function asUtcMs(local: LocalTime): number {
  return Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second);
}

/** The wall-clock fields of a UTC instant (the identity zone). */
export function utcFields(instant: Date): LocalTime {
  return {
    year: instant.getUTCFullYear(),
    month: instant.getUTCMonth() + 1,
    day: instant.getUTCDate(),
    hour: instant.getUTCHours(),
    minute: instant.getUTCMinutes(),
    second: instant.getUTCSeconds(),
  };
}

/** The offset changes of `zone` within a calendar year (UTC), in order. */
export function transitionsInYear(zone: string, year: number): Array<{ at: Date; from: number; to: number }> {
  const found: Array<{ at: Date; from: number; to: number }> = [];
  const end = Date.UTC(year + 1, 0, 1);
  const step = 6 * 3_600_000; // no zone changes its offset twice within six hours
  let t = Date.UTC(year, 0, 1);
  let offset = offsetSeconds(zone, new Date(t));
  while (t < end) {
    const next = Math.min(t + step, end);
    const nextOffset = offsetSeconds(zone, new Date(next));
    if (nextOffset !== offset) {
      let low = t;
      let high = next; // the offset at `low` is the old one, at `high` the new one
      while (high - low > 1000) {
        const mid = Math.floor((low + high) / 2000) * 1000;
        if (offsetSeconds(zone, new Date(mid)) === offset) low = mid;
        else high = mid;
      }
      found.push({ at: new Date(high), from: offset, to: nextOffset });
      offset = nextOffset;
    }
    t = next;
  }
  return found;
}
