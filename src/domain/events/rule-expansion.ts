/**
 * One RRULE/EXRULE expanded by rrule in floating time: every Date given to or taken from rrule has
 * UTC fields equal to the wall clock in the series' zone, and no `tzid` is ever passed (rrule's own
 * zone handling depends on the process TZ and is wrong around UNTIL and DST; see docs/architecture.md §9).
 *
 * Two guards around rrule's iterator (rrule 2.8.1 is pinned, and these rely on its internals):
 * - rrule only stops an iteration on an emitted date, so a rule that matches nothing (say Feb 30)
 *   would run to year 9999 (15 s for a daily rule). The per-period read of `options.interval` is
 *   turned into a budget: after GAP_PERIOD_BUDGET periods without a date the iteration ends.
 * - rrule always iterates from DTSTART. For a rule without COUNT, the iteration may instead start
 *   at the beginning of the period (day, week, month, year, respecting INTERVAL) that holds the
 *   wanted lower bound: the BYxxx defaults rrule derives from DTSTART are already explicit in its
 *   parsed options, so the dates from there on are the same. Deep pages of a long series stay fast.
 */
import rrulePkg from 'rrule';
import type { Frequency, RuleSpec } from './recurrence-lines.js';
import { DAY_MS, wallMs } from '../time/zones.js';

const { RRule, Weekday } = rrulePkg;
type RRuleInstance = InstanceType<typeof RRule>;
type ParsedOptions = RRuleInstance['options'];

/** rrule's MAXYEAR: nothing is emitted after it. */
export const MAX_WALL = Date.UTC(9999, 11, 31, 23, 59, 59);
/**
 * Periods without a date after which a rule counts as ended: about 41 years at INTERVAL=1 (Feb 29
 * on a Monday recurs up to 40 years apart). Yearly periods cost rrule the most, hence fewer.
 */
const GAP_PERIOD_BUDGET: Record<Frequency, number> = { DAILY: 15_000, WEEKLY: 2_200, MONTHLY: 500, YEARLY: 41 };

const FREQUENCIES: Record<Frequency, number> = {
  YEARLY: RRule.YEARLY,
  MONTHLY: RRule.MONTHLY,
  WEEKLY: RRule.WEEKLY,
  DAILY: RRule.DAILY,
};

export interface WallRule {
  spec: RuleSpec;
  rrule: RRuleInstance;
  /** Floating DTSTART (ms). */
  dtstartWall: number;
}

/** `untilWall`/`count` are the bounds rrule itself applies; both may be absent. */
export function buildWallRule(spec: RuleSpec, dtstartWall: number, bounds: { untilWall?: number; count?: number }): WallRule {
  const options: ConstructorParameters<typeof RRule>[0] & object = {
    // eslint-disable-next-line @typescript-eslint/no-unsafe-enum-assignment -- FREQUENCIES maps to RRule's Frequency values
    freq: FREQUENCIES[spec.freq],
    interval: spec.interval,
    dtstart: new Date(dtstartWall),
    wkst: spec.wkst ?? 0,
  };
  if (bounds.untilWall !== undefined) options.until = new Date(bounds.untilWall);
  if (bounds.count !== undefined) options.count = bounds.count;
  // Only the parts that were given: rrule derives its defaults from the absence of a key
  if (spec.bysetpos) options.bysetpos = spec.bysetpos;
  if (spec.bymonth) options.bymonth = spec.bymonth;
  if (spec.bymonthday) options.bymonthday = spec.bymonthday;
  if (spec.byyearday) options.byyearday = spec.byyearday;
  if (spec.byweekno) options.byweekno = spec.byweekno;
  if (spec.byday) options.byweekday = spec.byday.map((day) => new Weekday(day.weekday, day.ordinal));
  if (spec.byhour) options.byhour = spec.byhour;
  if (spec.byminute) options.byminute = spec.byminute;
  if (spec.bysecond) options.bysecond = spec.bysecond;
  return { spec, rrule: new RRule(options, true), dtstartWall };
}

interface IterResultLike {
  accept(date: Date): boolean;
  getValue(): null;
}

/**
 * Feeds every date of the rule from `startWall` on to `accept` (ascending, no repeats) until it
 * returns false, the rule ends, or the gap budget runs out. `startWall` must be the rule's DTSTART
 * or a value from `periodStartAtOrBefore`.
 */
export function iterateRule(rule: WallRule, startWall: number, accept: (wall: number) => boolean): void {
  const interval = rule.rrule.options.interval;
  const budget = 2 * GAP_PERIOD_BUDGET[rule.spec.freq];
  let readsSinceDate = 0;
  let exhausted = false;
  // iter() reads `interval` twice per period (its stop check and the period step)
  const options = {
    ...rule.rrule.options,
    dtstart: new Date(startWall),
    get interval() {
      if (exhausted || ++readsSinceDate > budget) exhausted = true;
      return exhausted ? 0 : interval;
    },
  };
  let last = -Infinity;
  const result: IterResultLike = {
    accept: (date) => {
      readsSinceDate = 0;
      const wall = date.getTime();
      if (wall <= last) return true;
      last = wall;
      return accept(wall);
    },
    getValue: () => null,
  };
  const runner = Object.create(rule.rrule) as { options: ParsedOptions; _iter(result: IterResultLike): unknown };
  runner.options = options;
  runner._iter(result);
}

/**
 * Dates of the rule in [fromWall, toWall], at most `max`; `more` when stopped by `max` (more may
 * follow). Starts at the period holding `fromWall` when the rule has no COUNT.
 */
export function collectWall(rule: WallRule, fromWall: number, toWall: number, max: number): { walls: number[]; more: boolean } {
  const walls: number[] = [];
  let more = false;
  const start = rule.rrule.options.count ? rule.dtstartWall : periodStartAtOrBefore(rule, fromWall);
  iterateRule(rule, start, (wall) => {
    if (wall < fromWall) return true;
    if (wall > toWall) return false;
    walls.push(wall);
    if (walls.length < max) return true;
    more = true;
    return false;
  });
  return { walls, more };
}

/** The start of the latest period of the rule (INTERVAL counted from DTSTART) beginning at or before `wall`. */
function periodStartAtOrBefore(rule: WallRule, wall: number): number {
  const { dtstartWall } = rule;
  const { interval, freq } = rule.spec;
  if (wall <= dtstartWall) return dtstartWall;
  const subSecond = ((dtstartWall % 1000) + 1000) % 1000; // rrule keeps DTSTART's milliseconds on each date
  const first = new Date(dtstartWall);
  const target = new Date(wall);
  let start: number;
  switch (freq) {
    case 'DAILY': {
      const firstDay = Math.floor(dtstartWall / DAY_MS);
      const steps = Math.floor((Math.floor(wall / DAY_MS) - firstDay) / interval);
      start = (firstDay + steps * interval) * DAY_MS;
      break;
    }
    case 'WEEKLY': {
      const weekStart = (day: number) => day - ((weekdayOf(day) - (rule.spec.wkst ?? 0) + 7) % 7);
      const firstWeek = weekStart(Math.floor(dtstartWall / DAY_MS));
      const steps = Math.floor((weekStart(Math.floor(wall / DAY_MS)) - firstWeek) / (7 * interval));
      start = (firstWeek + steps * 7 * interval) * DAY_MS;
      break;
    }
    case 'MONTHLY': {
      const firstMonth = first.getUTCFullYear() * 12 + first.getUTCMonth();
      const months = target.getUTCFullYear() * 12 + target.getUTCMonth() - firstMonth;
      const month = firstMonth + Math.floor(months / interval) * interval;
      start = wallMs({ year: Math.floor(month / 12), month: (month % 12) + 1, day: 1 });
      break;
    }
    case 'YEARLY': {
      const years = target.getUTCFullYear() - first.getUTCFullYear();
      start = wallMs({ year: first.getUTCFullYear() + Math.floor(years / interval) * interval, month: 1, day: 1 });
      break;
    }
  }
  // The first period may begin before DTSTART (a partial week or month): iterate it from DTSTART
  return start + subSecond <= dtstartWall ? dtstartWall : start + subSecond;
}

/** rrule's weekday numbering (Monday 0) of a day count since 1970-01-01, a Thursday. */
function weekdayOf(day: number): number {
  return (((day + 3) % 7) + 7) % 7;
}
