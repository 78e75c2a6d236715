/**
 * The occurrences of an event, as original UTC starts. A recurring event's come from its rule,
 * expanded in its time zone by the recurrence helper; a single timed event has exactly one, its
 * start (docs/decisions.md); a time-independent event has none. A series ends with the last
 * occurrence that ends within the year 9999 in UTC (an unbounded rule in a zone west of UTC, or
 * with a long duration, would otherwise run into the year 10000, which RFC 3339 cannot write).
 */
import { LATEST_INSTANT } from '../time/instants.js';
import { isOccurrence, occurrences, type Series } from './recurrence.js';
import { seriesOf, type Schedule } from './event-times.js';

export interface OccurrenceWindow {
  /** Only occurrences that start strictly after this original start (the cursor). */
  after?: Date;
  /** Skip occurrences that end before this instant. */
  from?: Date;
  /** Stop at occurrences that start after this instant. */
  to?: Date;
  limit: number;
}

const durationOf = (schedule: Schedule) => schedule.endsAt.getTime() - schedule.startsAt.getTime();

export function occurrencesOf(schedule: Schedule | undefined, window: OccurrenceWindow): Date[] {
  if (!schedule || window.limit <= 0) return [];
  const durationMs = durationOf(schedule);
  if (schedule.pattern.length === 0) {
    const start = schedule.startsAt;
    const inWindow =
      (!window.after || start > window.after) &&
      (!window.from || start.getTime() + durationMs >= window.from.getTime()) &&
      (!window.to || start <= window.to);
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
