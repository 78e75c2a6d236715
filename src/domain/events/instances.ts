/**
 * The occurrences of an event, as original UTC starts. A recurring event's come from its rule,
 * expanded in its time zone by the recurrence helper; a single timed event has exactly one, its
 * start (docs/decisions.md); a time-independent event has none. A series ends with the last
 * occurrence that ends within the year 9999 in UTC (an unbounded rule in a zone west of UTC, or
 * with a long duration, would otherwise run into the year 10000, which RFC 3339 cannot write).
 *
 * An occurrence is where its exception's own times put it, if it has them (it was moved), else at
 * its original start for the event's duration: `placeOccurrence`. Time ranges apply to that place.
 */
import type { EventExceptionRow } from '../../db/schema.js';
import { LATEST_INSTANT } from '../time/instants.js';
import { isOccurrence, occurrences, type Series } from './recurrence.js';
import { seriesOf, type Schedule } from './event-times.js';

/** The times an exception may set for its occurrence. */
export type ExceptionTimes = Pick<EventExceptionRow, 'instance_start' | 'starts_at' | 'ends_at'>;

export interface Place {
  start: Date;
  end: Date;
}

/** An exception with a start or an end of its own moves its occurrence (possibly to where it was). */
export const isMoved = (exception: Pick<EventExceptionRow, 'starts_at' | 'ends_at'>): boolean => exception.starts_at !== null || exception.ends_at !== null;

/** Where the occurrence of `originalStart` is, with its exception (if any) applied. */
export function placeOccurrence(durationMs: number, originalStart: Date, exception?: Pick<EventExceptionRow, 'starts_at' | 'ends_at'>): Place {
  const start = exception?.starts_at ?? originalStart;
  return { start, end: exception?.ends_at ?? new Date(start.getTime() + durationMs) };
}

export interface OccurrenceWindow {
  /** Only occurrences whose original start is strictly after this instant. */
  after?: Date;
  /** Skip occurrences that end before this instant. */
  from?: Date;
  /** Stop at occurrences that start after this instant. */
  to?: Date;
  limit: number;
}

export const durationOf = (schedule: Schedule) => schedule.endsAt.getTime() - schedule.startsAt.getTime();

export function occurrencesOf(schedule: Schedule | undefined, window: OccurrenceWindow): Date[] {
  if (!schedule || window.limit <= 0) return [];
  const durationMs = durationOf(schedule);
  if (schedule.pattern.length === 0) {
    const start = schedule.startsAt;
    const inWindow =
      (!window.after || start > window.after) && (!window.from || start.getTime() + durationMs >= window.from.getTime()) && (!window.to || start <= window.to);
    return inWindow ? [start] : [];
  }
  const series: Series = seriesOf(schedule);
  const lastStart = new Date(LATEST_INSTANT - durationMs);
  const to = window.to && window.to < lastStart ? window.to : lastStart;
  return occurrences(series, { durationMs, after: window.after, from: window.from, to, limit: window.limit });
}

/** Whether `start` is the original start of one of the event's occurrences. */
export function isOccurrenceOf(schedule: Schedule | undefined, start: Date): boolean {
  if (!schedule) return false;
  if (schedule.pattern.length === 0) return start.getTime() === schedule.startsAt.getTime();
  if (start.getTime() + durationOf(schedule) > LATEST_INSTANT) return false;
  return isOccurrence(seriesOf(schedule), start);
}

/**
 * An event's span for the time range of `GET /events`: from its rule's first start to its rule's
 * last end (`ruleEnd`, null for an unbounded series), widened to take in every moved occurrence
 * where it now is. An exception whose occurrence the event no longer produces (its start changed
 * since) describes nothing and counts for nothing.
 */
export function spanOf(schedule: Schedule, ruleEnd: Date | null, moved: readonly ExceptionTimes[]): { span_start: Date; span_end: Date | null } {
  const durationMs = durationOf(schedule);
  let start = schedule.startsAt.getTime();
  let end = ruleEnd?.getTime() ?? null;
  for (const exception of moved) {
    if (!isMoved(exception) || !isOccurrenceOf(schedule, exception.instance_start)) continue;
    const place = placeOccurrence(durationMs, exception.instance_start, exception);
    start = Math.min(start, place.start.getTime());
    if (end !== null) end = Math.max(end, place.end.getTime());
  }
  return { span_start: new Date(start), span_end: end === null ? null : new Date(end) };
}
