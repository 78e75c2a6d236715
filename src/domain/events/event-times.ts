/**
 * The schedule of a timed event (first occurrence, time zones, recurrence) and the checks of
 * create/patch that the schema cannot express (answered 400 `invalid_event`):
 * `ends_at` before `starts_at` or after the year 9999 (UTC), an event lasting over 68 years, all-day
 * times not at 00:00:00 UTC, a recurrence that does not parse, recurs more often than daily or
 * yields nothing. The stored columns follow from it, among them `range_end`, the end of the last
 * occurrence, and `span_start`/`span_end`, which the time-range filter of `GET /events` uses (the
 * rule's span here, widened by moved occurrences, see `spanOf` in instances.ts).
 */
import type { components } from '../../../generated/openapi.js';
import type { EventRow } from '../../db/schema.js';
import { DomainError, errors } from '../../errors.js';
import { LATEST_INSTANT, instant } from '../time/instants.js';
import { lastOccurrenceStart, validatePattern, type Series } from './recurrence.js';

export interface Schedule {
  isAllDay: boolean;
  startsAt: Date;
  startsTz: string;
  endsAt: Date;
  endsTz: string;
  pattern: string[];
}

/** The time columns of an event row; a time-independent event has them all null. */
export type TimeColumns = Pick<
  EventRow,
  'is_all_day' | 'starts_at' | 'starts_at_tz' | 'ends_at' | 'ends_at_tz' | 'duration_secs' | 'recurrence_pattern' | 'range_end' | 'span_start' | 'span_end'
>;

export const NO_TIMES: TimeColumns = {
  is_all_day: null,
  starts_at: null,
  starts_at_tz: null,
  ends_at: null,
  ends_at_tz: null,
  duration_secs: null,
  recurrence_pattern: [],
  range_end: null,
  span_start: null,
  span_end: null,
};

type Schemas = components['schemas'];

/** `duration_secs` is a 32-bit integer column: a longer event was once a 500 from the database. */
const MAX_DURATION_SECS = 2_147_483_647;

/** A time zone the runtime does not know is a field error, like any other malformed value. */
export function checkTimeZone(zone: string, field: string): void {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
  } catch {
    throw errors.validationFailed([{ field, code: 'invalid_value', message: `unknown time zone ${JSON.stringify(zone)}` }]);
  }
}

const isMidnightUtc = (d: Date) => d.getUTCHours() === 0 && d.getUTCMinutes() === 0 && d.getUTCSeconds() === 0 && d.getUTCMilliseconds() === 0;

/** The checks of a single occurrence's times (also used for an instance's exception). */
export function checkOccurrenceTimes(isAllDay: boolean, startsAt: Date, endsAt: Date): void {
  if (endsAt.getTime() < startsAt.getTime()) throw errors.invalidEvent('ends_at must not be before starts_at');
  // an exception's end may be computed (its start plus the event's duration)
  if (endsAt.getTime() > LATEST_INSTANT) throw errors.invalidEvent('an occurrence must end by 9999-12-31T23:59:59.999Z');
  if (isAllDay && !(isMidnightUtc(startsAt) && isMidnightUtc(endsAt))) {
    throw errors.invalidEvent('is_all_day requires starts_at and ends_at at the start of a day (00:00:00 UTC)');
  }
}

export function seriesOf(schedule: Pick<Schedule, 'startsAt' | 'startsTz' | 'isAllDay' | 'pattern'>): Series {
  return { start: schedule.startsAt, timezone: schedule.startsTz, isAllDay: schedule.isAllDay, pattern: schedule.pattern };
}

/** Every check of a timed event, then its columns. */
export function scheduleColumns(schedule: Schedule): TimeColumns {
  checkTimeZone(schedule.startsTz, 'starts_at.timezone');
  checkTimeZone(schedule.endsTz, 'ends_at.timezone');
  checkOccurrenceTimes(schedule.isAllDay, schedule.startsAt, schedule.endsAt);
  const durationMs = schedule.endsAt.getTime() - schedule.startsAt.getTime();
  if (Math.round(durationMs / 1000) > MAX_DURATION_SECS)
    throw errors.invalidEvent(`an event must not last longer than ${MAX_DURATION_SECS} seconds (68 years)`);
  let rangeEnd: Date | null = schedule.endsAt;
  if (schedule.pattern.length > 0) {
    const series = seriesOf(schedule);
    asInvalidEvent(() => validatePattern(series));
    const last = asInvalidEvent(() => lastOccurrenceStart(series));
    rangeEnd = last === null ? null : new Date(Math.max(last.getTime() + durationMs, schedule.endsAt.getTime()));
  }
  return {
    is_all_day: schedule.isAllDay,
    starts_at: schedule.startsAt,
    starts_at_tz: schedule.startsTz,
    ends_at: schedule.endsAt,
    ends_at_tz: schedule.endsTz,
    duration_secs: Math.round(durationMs / 1000),
    recurrence_pattern: schedule.pattern,
    range_end: rangeEnd,
    // the rule's span; moved occurrences widen it (events.service.ts keeps it current)
    span_start: schedule.startsAt,
    span_end: rangeEnd,
  };
}

/** The schedule stored in a timed event's row; undefined for a time-independent event. */
export function scheduleOf(
  row: Pick<EventRow, 'is_time_independent' | 'is_all_day' | 'starts_at' | 'starts_at_tz' | 'ends_at' | 'ends_at_tz' | 'recurrence_pattern'>,
): Schedule | undefined {
  if (row.is_time_independent || !row.starts_at || !row.ends_at) return undefined;
  return {
    isAllDay: row.is_all_day ?? false,
    startsAt: row.starts_at,
    startsTz: row.starts_at_tz ?? 'UTC',
    endsAt: row.ends_at,
    endsTz: row.ends_at_tz ?? row.starts_at_tz ?? 'UTC',
    pattern: row.recurrence_pattern,
  };
}

/** The schedule of a new event; undefined for a time-independent one (the schema checked which fields come). */
export function createdSchedule(body: Schemas['EventCreate']): Schedule | undefined {
  if (body.is_time_independent || !body.starts_at || !body.ends_at) return undefined;
  return {
    isAllDay: body.is_all_day ?? false,
    startsAt: instant(body.starts_at.datetime, 'starts_at.datetime'),
    startsTz: body.starts_at.timezone,
    endsAt: instant(body.ends_at.datetime, 'ends_at.datetime'),
    endsTz: body.ends_at.timezone,
    pattern: body.recurrence_pattern ?? [],
  };
}

/** The schedule a patch leads to (undefined: time-independent), with the field errors of docs/decisions.md. */
export function patchedSchedule(isTimeIndependent: boolean, old: Schedule | undefined, body: Schemas['EventPatch']): Schedule | undefined {
  const timeIndependent = body.is_time_independent ?? isTimeIndependent;
  if (timeIndependent) {
    // `is_time_independent: true` together with time fields is refused by the schema already
    const ignored: string[] = (['is_all_day', 'starts_at', 'ends_at'] as const).filter((f) => body[f] !== undefined);
    if (body.recurrence_pattern && body.recurrence_pattern.length > 0) ignored.push('recurrence_pattern');
    if (ignored.length > 0) {
      throw errors.validationFailed(ignored.map((field) => ({ field, code: 'ignored_value', message: 'a time-independent event has no times' })));
    }
    return undefined;
  }
  if (!old) {
    const missing = (['is_all_day', 'starts_at', 'ends_at'] as const).filter((f) => body[f] === undefined);
    if (missing.length > 0) {
      throw errors.validationFailed(
        missing.map((field) => ({ field, code: 'value_required', message: 'a timed event needs is_all_day, starts_at and ends_at' })),
      );
    }
  }
  // from here on every field either came in the body or `old` exists (checked just above)
  return {
    isAllDay: body.is_all_day ?? old!.isAllDay,
    startsAt: body.starts_at ? instant(body.starts_at.datetime, 'starts_at.datetime') : old!.startsAt,
    startsTz: body.starts_at?.timezone ?? old!.startsTz,
    endsAt: body.ends_at ? instant(body.ends_at.datetime, 'ends_at.datetime') : old!.endsAt,
    endsTz: body.ends_at?.timezone ?? old!.endsTz,
    pattern: body.recurrence_pattern ?? old?.pattern ?? [],
  };
}

/** The recurrence helper reports a bad rule by throwing; anything but our own DomainError becomes `invalid_event`. */
function asInvalidEvent<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof DomainError) throw err;
    throw errors.invalidEvent(`invalid recurrence_pattern: ${err instanceof Error ? err.message : String(err)}`);
  }
}
