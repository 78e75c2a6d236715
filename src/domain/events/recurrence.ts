/**
 * RFC 5545 recurrence of events: which starts a series has, expanded in the event's IANA zone so
 * that a 10:00 Berlin meeting stays at 10:00 local across daylight-saving changes.
 *
 * rrule expands each RRULE/EXRULE in floating time (rule-expansion.ts); DTSTART, UNTIL, RDATE and
 * EXDATE are converted between instants and wall clock with Intl (time/zones.ts), so nothing here
 * depends on the process's TZ. Semantics follow RFC 5545 (and agree with ical.js):
 * - DTSTART is always the first occurrence and counts towards COUNT, even when the rule itself would
 *   not produce it; several RRULEs each count it.
 * - A wall time in a DST gap moves forward by the gap; one in an overlap is the first instant.
 * - UNTIL with Z and RDATE/EXDATE with Z or TZID are instants; without them, wall times in the zone.
 *   EXDATE;VALUE=DATE on a timed series removes every occurrence on that local date; RDATE;VALUE=DATE
 *   adds one at DTSTART's time of day.
 * - All-day series are dates: their wall clock is UTC, and RDATE/EXDATE/UNTIL count as the date
 *   written, whatever their zone.
 * - COUNT above 36 525 (100 years of daily meetings, the reference's cap) is treated as no COUNT.
 *   A COUNT rule is walked once to find its last date (rrule needs ~25 µs per day, so up to ~1 s for
 *   the cap); the compiled series is cached, so that happens once per series and process.
 */
import { errors } from '../../errors.js';
import { parsePattern, type DateValue, type ParsedPattern, type RuleSpec } from './recurrence-lines.js';
import { buildWallRule, collectWall, iterateRule, MAX_WALL, type WallRule } from './rule-expansion.js';
import { DAY_MS, instantToWall, isKnownTimeZone, wallMs, wallToInstant } from '../time/zones.js';

export interface Series {
  /** UTC instant of the first occurrence's start (DTSTART). */
  start: Date;
  /** IANA zone of starts_at; wall-clock times are kept in this zone across DST. */
  timezone: string;
  /** All-day: dates, expanded without zone shifts (start is 00:00 UTC of the date). */
  isAllDay: boolean;
  /** RFC 5545 lines: RRULE, EXRULE, RDATE, EXDATE (with or without the "RRULE:" prefix; RDATE/EXDATE may carry TZID= or VALUE=DATE). */
  pattern: readonly string[];
}

const COUNT_CAP = 36_525;
/** Growth limit of one expansion when EXRULEs keep removing what was generated. */
const MAX_BATCH = 40_000;
const PERIOD_MS = { DAILY: DAY_MS, WEEKLY: 7 * DAY_MS, MONTHLY: 31 * DAY_MS, YEARLY: 366 * DAY_MS };

interface CompiledRule {
  wall: WallRule;
  /** Dates after this instant are not part of the rule (UNTIL, compared as an instant). */
  untilInstant: number;
  /** The last date, known exactly for a COUNT rule. */
  lastWall?: number;
}

interface CompiledSeries {
  /** The zone wall clocks are read in; UTC for all-day series. */
  zone: string;
  allDay: boolean;
  startMs: number;
  startWall: number;
  specs: RuleSpec[];
  rules: CompiledRule[];
  exrules: CompiledRule[];
  /** RDATE instants, ascending. */
  rdates: number[];
  exdates: Set<number>;
  /** Local dates (days since 1970 in wall time) fully excluded by EXDATE;VALUE=DATE of a timed series. */
  exdays: Set<number>;
  unbounded: boolean;
  /** The answers of `isOccurrence` so far, by instant (ms): the series, hence each answer, never changes. */
  checked: Map<number, boolean>;
}

/** Answers of `isOccurrence` kept per compiled series; past this many the series starts afresh. */
const CHECKED_PER_SERIES = 256;

/** Throws errors.invalidEvent(…) for anything the series cannot be expanded with. */
export function validatePattern(series: Series): void {
  if (!isKnownTimeZone(series.timezone)) {
    throw errors.invalidEvent(`Unknown time zone "${series.timezone}"`);
  }
  const compiled = compile(series);
  if (compiled.rdates.some((instant) => instant < compiled.startMs)) {
    throw errors.invalidEvent('An RDATE lies before the start of the event');
  }
  // Before any expansion: a rule matching nothing would otherwise cost each of them the gap budget
  for (const spec of compiled.specs) {
    if (!ruleYieldsAny(compiled, spec)) {
      throw errors.invalidEvent(`Invalid recurrence line "${spec.source}": it yields no occurrence`);
    }
  }
  if (occurrencesOf(compiled, { durationMs: 0, limit: 1 }).length === 0) {
    throw errors.invalidEvent('The recurrence pattern yields no occurrence: every date is excluded');
  }
}

/** Start of the last occurrence, or null when the series is unbounded (no COUNT/UNTIL on some RRULE). */
export function lastOccurrenceStart(series: Series): Date | null {
  const compiled = compile(series);
  if (compiled.unbounded) return null;
  let end = Math.max(compiled.startMs, ...compiled.rdates);
  for (const rule of compiled.rules) end = Math.max(end, lastOfRule(compiled, rule));
  // The latest candidate may be excluded: look back over growing windows
  for (let span = 32 * DAY_MS; ; span *= 4) {
    const lower = Math.max(compiled.startMs, end - span);
    const { starts } = expandWindow(compiled, lower, end, Infinity);
    if (starts.length > 0) return new Date(starts[starts.length - 1]!);
    if (lower <= compiled.startMs) return new Date(compiled.startMs); // everything excluded: refused by validation
  }
}

/**
 * Original occurrence starts (UTC), ascending. `after`: exclusive lower bound on the start.
 * `from`/`to`: keep occurrences whose [start, start + durationMs] overlaps [from, to].
 */
export function occurrences(series: Series, options: OccurrenceWindow): Date[] {
  return occurrencesOf(compile(series), options);
}

interface OccurrenceWindow {
  durationMs: number;
  after?: Date;
  from?: Date;
  to?: Date;
  limit: number;
}

function occurrencesOf(compiled: CompiledSeries, options: OccurrenceWindow): Date[] {
  const lower = Math.max(options.after ? options.after.getTime() + 1 : -Infinity, options.from ? options.from.getTime() - options.durationMs : -Infinity);
  const upper = options.to ? options.to.getTime() : Infinity;
  if (options.limit < 1 || lower > upper) return [];
  for (let batch = options.limit + compiled.exdates.size + 2; ; batch *= 4) {
    const { starts, complete } = expandWindow(compiled, lower, upper, batch);
    if (starts.length >= options.limit || complete || batch >= MAX_BATCH) {
      return starts.slice(0, options.limit).map((instant) => new Date(instant));
    }
  }
}

/** One line of a pattern as the expansion reads it (see `readPatternLines`). */
export type PatternLine =
  | { name: 'RRULE' | 'EXRULE'; spec: RuleSpec; /** UNTIL as an instant (ms). */ untilInstant?: number }
  | { name: 'RDATE' | 'EXDATE'; /** Instants (ms); all-day: 00:00 UTC of each date. */ instants: number[] };

/**
 * The lines of a pattern with their dates read as the expansion reads them (see the header), for
 * writing the pattern out in another form (the calendar attachment of a mail). A line that does not
 * parse is left out. A DATE value in a timed series is placed at DTSTART's time of day: for an RDATE
 * exactly as expanded; an EXDATE;VALUE=DATE removes the whole local date here, which this names
 * only by its occurrence at that time.
 */
export function readPatternLines(series: Series): PatternLine[] {
  const zone = series.isAllDay ? 'UTC' : series.timezone;
  const reading: Reading = { zone, allDay: series.isAllDay, startWall: instantToWall(series.start.getTime(), zone) };
  const lines: PatternLine[] = [];
  for (const line of series.pattern) {
    let parsed: ParsedPattern;
    try {
      parsed = parsePattern([line], series.isAllDay);
    } catch {
      continue;
    }
    for (const [name, specs] of [
      ['RRULE', parsed.rrules],
      ['EXRULE', parsed.exrules],
    ] as const) {
      for (const spec of specs) lines.push({ name, spec, untilInstant: spec.until && untilInstantOf(reading, spec.until) });
    }
    for (const [name, values] of [
      ['RDATE', parsed.rdates],
      ['EXDATE', parsed.exdates],
    ] as const) {
      if (values.length > 0) lines.push({ name, instants: values.map((value) => rdateInstant(reading, value)) });
    }
  }
  return lines;
}

/** Whether `start` is an original occurrence start of the series. */
export function isOccurrence(series: Series, start: Date): boolean {
  // Each listing of a series checks its exceptions again, an expansion by rrule each (50 µs): the
  // answer is kept with the compiled series, whose cache key is everything the answer depends on
  const compiled = compile(series);
  const { checked } = compiled;
  const at = start.getTime();
  const known = checked.get(at);
  if (known !== undefined) return known;
  const [found] = occurrencesOf(compiled, { durationMs: 0, from: start, to: start, limit: 1 });
  if (checked.size >= CHECKED_PER_SERIES) checked.clear();
  const answer = found?.getTime() === at;
  checked.set(at, answer);
  return answer;
}

/** `YYYYMMDDTHHMMSSZ` of the original start (as the reference controller does). */
export function formatInstanceId(start: Date): string {
  return start.toISOString().slice(0, 19).replace(/[-:]/g, '') + 'Z';
}

/** Inverse of formatInstanceId, also accepting `YYYYMMDDTHHMMSS±hhmm`; undefined for anything malformed. */
export function parseInstanceId(id: string): Date | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(?:Z|([+-])(\d{2})(\d{2}))$/.exec(id);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const wall = wallMs({ year, month, day, hour, minute, second });
  const date = new Date(wall);
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59) {
    return undefined;
  }
  if (match[7] === undefined) return date;
  const [offsetHours, offsetMinutes] = [Number(match[8]), Number(match[9])];
  if (offsetHours > 23 || offsetMinutes > 59) return undefined;
  const offset = (match[7] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  return new Date(wall - offset);
}

// ---- compilation ----------------------------------------------------------------------------

const compiledCache = new Map<string, CompiledSeries>();
const COMPILED_CACHE_SIZE = 500;

/** Compiling a COUNT rule walks all its dates once; the result is kept for the next request. */
function compile(series: Series): CompiledSeries {
  const key = `${series.start.getTime()}|${series.timezone}|${series.isAllDay}|${series.pattern.join('\n')}`;
  const cached = compiledCache.get(key);
  if (cached) return cached;
  const compiled = compileUncached(series);
  if (compiledCache.size >= COMPILED_CACHE_SIZE) compiledCache.delete(compiledCache.keys().next().value!);
  compiledCache.set(key, compiled);
  return compiled;
}

function compileUncached(series: Series): CompiledSeries {
  const parsed = parsePattern(series.pattern, series.isAllDay);
  const zone = series.isAllDay ? 'UTC' : series.timezone;
  const startMs = series.start.getTime();
  const compiled: CompiledSeries = {
    zone,
    allDay: series.isAllDay,
    startMs,
    startWall: instantToWall(startMs, zone),
    specs: [...parsed.rrules, ...parsed.exrules],
    rules: [],
    exrules: [],
    rdates: [],
    exdates: new Set(),
    exdays: new Set(),
    unbounded: false,
    checked: new Map(),
  };
  for (const spec of parsed.rrules) {
    const rule = compileRule(compiled, spec, true);
    if (rule) compiled.rules.push(rule);
    if (rule && rule.lastWall === undefined && rule.untilInstant === Infinity) compiled.unbounded = true;
  }
  for (const spec of parsed.exrules) {
    const rule = compileRule(compiled, spec, false);
    if (rule) compiled.exrules.push(rule);
  }
  for (const value of parsed.rdates) compiled.rdates.push(rdateInstant(compiled, value));
  compiled.rdates.sort((a, b) => a - b);
  for (const value of parsed.exdates) {
    if (value.time === undefined && !series.isAllDay) compiled.exdays.add(dateWall(value) / DAY_MS);
    else compiled.exdates.add(valueInstant(compiled, value));
  }
  return compiled;
}

/** undefined: a COUNT rule that DTSTART alone already satisfies. */
function compileRule(series: CompiledSeries, spec: RuleSpec, countsDtstart: boolean): CompiledRule | undefined {
  const untilInstant = spec.until ? untilInstantOf(series, spec.until) : Infinity;
  if (spec.count === undefined || spec.count > COUNT_CAP) {
    const untilWall = untilInstant === Infinity ? undefined : Math.min(MAX_WALL, toWall(series, untilInstant) + DAY_MS);
    return { wall: buildWallRule(spec, series.startWall, { untilWall }), untilInstant };
  }
  // Walk the COUNT dates once and keep the last as an exact floating UNTIL, so later expansions can
  // start near the window they want instead of at DTSTART
  let target = spec.count;
  let taken = 0;
  let lastWall: number | undefined;
  iterateRule(buildWallRule(spec, series.startWall, { count: spec.count }), series.startWall, (wall) => {
    if (taken === 0 && countsDtstart && wall !== series.startWall) target -= 1;
    if (taken >= target) return false;
    taken += 1;
    lastWall = wall;
    return taken < target;
  });
  if (lastWall === undefined) return undefined;
  return { wall: buildWallRule(spec, series.startWall, { untilWall: lastWall }), untilInstant, lastWall };
}

/** What reading a written date needs of its series. */
type Reading = Pick<CompiledSeries, 'zone' | 'allDay' | 'startWall'>;

/** An RDATE value's instant: a DATE in a timed series is that day's occurrence at DTSTART's time of day. */
function rdateInstant(series: Reading, value: DateValue): number {
  if (value.time !== undefined || series.allDay) return valueInstant(series, value);
  const timeOfDay = ((series.startWall % DAY_MS) + DAY_MS) % DAY_MS;
  return toInstant(series, dateWall(value) + timeOfDay);
}

function untilInstantOf(series: Reading, until: DateValue): number {
  if (series.allDay || until.utc) return valueInstant(series, until);
  // A DATE bound on a timed series keeps every occurrence on that local date
  if (until.time === undefined) return toInstant(series, dateWall(until) + DAY_MS) - 1;
  return toInstant(series, dateWall(until) + timeMs(until));
}

/** The instant a written date denotes in this series (see the header for the rules). */
function valueInstant(series: Reading, value: DateValue): number {
  const wall = dateWall(value) + timeMs(value);
  if (series.allDay) return dateWall(value);
  if (value.utc) return wall;
  return wallToInstant(wall, value.tzid ?? series.zone);
}

function ruleYieldsAny(series: CompiledSeries, spec: RuleSpec): boolean {
  const untilInstant = spec.until ? untilInstantOf(series, spec.until) : Infinity;
  let first: number | undefined;
  iterateRule(buildWallRule(spec, series.startWall, {}), series.startWall, (wall) => {
    first = wall;
    return false;
  });
  return first !== undefined && toInstant(series, first) <= untilInstant;
}

/** The latest date of a bounded rule (-Infinity when it has none). */
function lastOfRule(series: CompiledSeries, rule: CompiledRule): number {
  if (rule.lastWall !== undefined) return toInstant(series, rule.lastWall);
  const untilWall = Math.min(MAX_WALL, toWall(series, rule.untilInstant) + DAY_MS);
  for (let span = 2 * PERIOD_MS[rule.wall.spec.freq] * rule.wall.spec.interval; ; span *= 4) {
    const lower = Math.max(series.startWall, untilWall - span);
    const { walls } = collectWall(rule.wall, lower, untilWall, Infinity);
    const instants = walls.map((wall) => toInstant(series, wall)).filter((instant) => instant <= rule.untilInstant);
    if (instants.length > 0) return instants[instants.length - 1]!;
    if (lower <= series.startWall) return -Infinity;
  }
}

// ---- expansion ------------------------------------------------------------------------------

/**
 * The starts in [lower, upper], ascending, generating at most `batch` dates per rule. `complete`
 * is false when a rule was cut by `batch`: the answer is then exact only up to where it stops.
 */
function expandWindow(series: CompiledSeries, lower: number, upper: number, batch: number) {
  // Two days of slack: a wall clock is at most ~26 h from its instant, and gaps move times forward
  const fromWall = lower > series.startMs ? Math.max(series.startWall, toWall(series, lower) - 2 * DAY_MS) : series.startWall;
  const toWallBound = upper === Infinity ? MAX_WALL : Math.min(MAX_WALL, toWall(series, upper) + 2 * DAY_MS);
  let safeUpper = upper;
  let complete = true;
  const candidates = [series.startMs, ...series.rdates];
  for (const rule of series.rules) {
    if (fromWall > toWallBound) break;
    const { walls, more } = collectWall(rule.wall, fromWall, toWallBound, batch);
    for (const wall of walls) {
      const instant = toInstant(series, wall);
      if (instant <= rule.untilInstant) candidates.push(instant);
    }
    if (more) {
      complete = false;
      safeUpper = Math.min(safeUpper, toInstant(series, walls[walls.length - 1]!));
    }
  }
  const inRange = [...new Set(candidates)].filter((instant) => instant >= lower && instant <= safeUpper).sort((a, b) => a - b);
  const excludedByRule = exruleInstants(series, inRange);
  const starts = inRange.filter(
    (instant) =>
      !series.exdates.has(instant) &&
      !excludedByRule.has(instant) &&
      (series.exdays.size === 0 || !series.exdays.has(Math.floor(toWall(series, instant) / DAY_MS))),
  );
  return { starts, complete };
}

/** EXRULE dates among the candidates' span, as instants. */
function exruleInstants(series: CompiledSeries, candidates: number[]): Set<number> {
  const excluded = new Set<number>();
  if (series.exrules.length === 0 || candidates.length === 0) return excluded;
  const fromWall = toWall(series, candidates[0]!) - DAY_MS;
  const toWallBound = toWall(series, candidates[candidates.length - 1]!) + DAY_MS;
  for (const rule of series.exrules) {
    for (const wall of collectWall(rule.wall, fromWall, toWallBound, Infinity).walls) {
      const instant = toInstant(series, wall);
      if (instant <= rule.untilInstant) excluded.add(instant);
    }
  }
  return excluded;
}

// ---- time helpers ---------------------------------------------------------------------------

function toInstant(series: Pick<CompiledSeries, 'zone'>, wall: number): number {
  return wallToInstant(wall, series.zone);
}

function toWall(series: CompiledSeries, instant: number): number {
  return instantToWall(instant, series.zone);
}

function dateWall(value: DateValue): number {
  return wallMs({ year: value.year, month: value.month, day: value.day });
}

function timeMs(value: DateValue): number {
  return value.time ? ((value.time.hour * 60 + value.time.minute) * 60 + value.time.second) * 1000 : 0;
}
