/**
 * A VTIMEZONE for an IANA zone, generated from the runtime's tz database.
 *
 * Outlook reduces every VTIMEZONE to one yearly standard and one yearly daylight transition, read
 * from DTSTART, RRULE and the offsets only, and older Exchange fails on more than one DAYLIGHT
 * component ([MS-STANOICAL] 2.2.47). Google accepts any valid one. So the preferred shape is that
 * one: a STANDARD and a DAYLIGHT, each with a yearly RRULE (`BYMONTH` + `BYDAY`, e.g. the last
 * Sunday of March), derived from the zone's transitions in the event's year and checked against
 * the two years after. A zone without daylight saving time gets a single STANDARD. A zone whose
 * changes follow no such rule (e.g. tied to a lunar calendar) gets its real transitions as RDATEs
 * over twenty years instead: correct for every RFC 5545 reader, approximated by Outlook.
 */
import { formatLocalDateTime, formatOffset } from './ics-format.js';
import { offsetSeconds, wallFields, type LocalTime } from '../time/zones.js';

const WEEKDAYS = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'] as const;
const RDATE_YEARS = 20;
/** The observances' DTSTART year, as most generators (and Outlook itself) use an early fixed year. */
const RULE_EPOCH = 1970;

interface Transition {
  at: Date;
  from: number;
  to: number;
}

/** A yearly rule: the `week`th (−1: last) `weekday` of `month`, or a fixed `monthDay`. */
type YearlyRule = { month: number; weekday: number; week: number } | { month: number; monthDay: number };

const cache = new Map<string, string[]>();

/** The VTIMEZONE lines for `zone`, with rules as of `year`. */
export function vtimezone(zone: string, year: number): string[] {
  const key = `${zone}|${year}`;
  let lines = cache.get(key);
  if (!lines) {
    lines = ['BEGIN:VTIMEZONE', `TZID:${zone}`, `X-LIC-LOCATION:${zone}`, ...observances(zone, year), 'END:VTIMEZONE'];
    cache.set(key, lines);
  }
  return lines;
}

function observances(zone: string, year: number): string[] {
  const transitions = transitionsInYear(zone, year);
  if (transitions.length === 0 && transitionsInYear(zone, year + 1).length === 0) {
    const offset = offsetSeconds(zone, new Date(Date.UTC(year, 6, 1)));
    return observance('STANDARD', offset, offset, `${RULE_EPOCH}0101T000000`, []);
  }
  const rules = transitions.map((t) => ruleFor(zone, t, year));
  if (transitions.length > 0 && rules.every((rule) => rule !== undefined)) {
    return transitions.flatMap((t, i) => {
      const rule = rules[i]!;
      const start = { ...wallClockAt(t), ...dateOfRule(rule, RULE_EPOCH) };
      return observance(kindOf(t), t.from, t.to, formatLocalDateTime(start), [`RRULE:${formatRule(rule)}`]);
    });
  }
  return explicitTransitions(zone, year);
}

function observance(kind: string, from: number, to: number, start: string, extra: string[]): string[] {
  return [`BEGIN:${kind}`, `TZOFFSETFROM:${formatOffset(from)}`, `TZOFFSETTO:${formatOffset(to)}`, `DTSTART:${start}`, ...extra, `END:${kind}`];
}

const kindOf = (t: Transition) => (t.to > t.from ? 'DAYLIGHT' : 'STANDARD');

/** The local time of a transition on the clock that was valid until then (what DTSTART states). */
function wallClockAt(t: Transition): LocalTime {
  return wallFields(t.at.getTime() + t.from * 1000);
}

/** A yearly rule that yields this transition and the matching ones of the next two years. */
function ruleFor(zone: string, t: Transition, year: number): YearlyRule | undefined {
  const local = wallClockAt(t);
  const weekday = new Date(Date.UTC(local.year, local.month - 1, local.day)).getUTCDay();
  const candidates: YearlyRule[] = [];
  if (local.day + 7 > daysInMonth(local.year, local.month)) candidates.push({ month: local.month, weekday, week: -1 });
  candidates.push({ month: local.month, weekday, week: Math.ceil(local.day / 7) });
  candidates.push({ month: local.month, monthDay: local.day });
  const later = [year + 1, year + 2].map((y) => transitionsInYear(zone, y).find((u) => u.from === t.from && u.to === t.to));
  return candidates.find((rule) =>
    later.every((u, i) => {
      if (!u) return false;
      const wall = wallClockAt(u);
      const expected = dateOfRule(rule, year + 1 + i);
      return (
        wall.month === expected.month && wall.day === expected.day && wall.hour === local.hour && wall.minute === local.minute && wall.second === local.second
      );
    }),
  );
}

function dateOfRule(rule: YearlyRule, year: number): { year: number; month: number; day: number } {
  if ('monthDay' in rule) return { year, month: rule.month, day: rule.monthDay };
  const firstWeekday = new Date(Date.UTC(year, rule.month - 1, 1)).getUTCDay();
  const first = 1 + ((rule.weekday - firstWeekday + 7) % 7);
  if (rule.week > 0) return { year, month: rule.month, day: first + (rule.week - 1) * 7 };
  const last = daysInMonth(year, rule.month);
  return { year, month: rule.month, day: first + Math.floor((last - first) / 7) * 7 };
}

function formatRule(rule: YearlyRule): string {
  if ('monthDay' in rule) return `FREQ=YEARLY;BYMONTH=${rule.month};BYMONTHDAY=${rule.monthDay}`;
  return `FREQ=YEARLY;BYMONTH=${rule.month};BYDAY=${rule.week}${WEEKDAYS[rule.weekday]}`;
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** The offset before the year, then every transition of the next twenty years as RDATEs. */
function explicitTransitions(zone: string, year: number): string[] {
  const initial = offsetSeconds(zone, new Date(Date.UTC(year, 0, 1)));
  const lines = observance('STANDARD', initial, initial, `${RULE_EPOCH}0101T000000`, []);
  const groups = new Map<string, Transition[]>();
  for (let y = year; y < year + RDATE_YEARS; y++) {
    for (const t of transitionsInYear(zone, y)) {
      const key = `${t.from}|${t.to}`;
      groups.set(key, [...(groups.get(key) ?? []), t]);
    }
  }
  for (const group of groups.values()) {
    const first = group[0]!;
    // One RDATE per transition, the first one included although DTSTART names it: ical.js (and
    // other readers) take only the first value of an RDATE and skip DTSTART once RDATEs exist.
    const rdates = group.map((t) => `RDATE:${formatLocalDateTime(wallClockAt(t))}`);
    lines.push(...observance(kindOf(first), first.from, first.to, formatLocalDateTime(wallClockAt(first)), rdates));
  }
  return lines;
}

/** The offset changes of `zone` within a calendar year (UTC), in order. */
export function transitionsInYear(zone: string, year: number): Transition[] {
  const found: Transition[] = [];
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
