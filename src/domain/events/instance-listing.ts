/**
 * One page of `GET /events/{id}/instances`: the occurrences in the order of where they are (their
 * start, exceptions applied; ties by original start), the time range applying to where they are.
 *
 * Two sources, merged: the rule's occurrences that were not moved, expanded over the range (their
 * place is their original slot), and the moved ones (exceptions with times of their own), read from
 * the database where they are now, wherever their original slot lies, before the series' start or
 * after its end included. The keyset (place, original start) is what the page cursor carries.
 */
import type { Db, EventExceptionRow } from '../../db/schema.js';
import type { InstancePosition } from './cursor.js';
import type { Schedule } from './event-times.js';
import * as repo from './events.repository.js';
import { durationOf, isMoved, isOccurrenceOf, occurrencesOf, placeOccurrence } from './instances.js';

export interface ListedOccurrence {
  /** The original start: the instance id. */
  start: Date;
  exception?: EventExceptionRow;
  /** Where it starts now. */
  at: Date;
}

export interface OccurrencePageQuery {
  /** Skip occurrences that end before this instant. */
  from?: Date;
  /** Stop at occurrences that start after this instant. */
  to?: Date;
  after?: InstancePosition;
  perPage: number;
}

const compare = (a: InstancePosition, b: InstancePosition) => a.at.getTime() - b.at.getTime() || a.original.getTime() - b.original.getTime();

const positionOf = (o: ListedOccurrence): InstancePosition => ({ at: o.at, original: o.start });

/** A page and whether more follow. */
export async function occurrencePage(
  db: Db,
  eventId: string,
  schedule: Schedule | undefined,
  query: OccurrencePageQuery,
): Promise<{ items: ListedOccurrence[]; more: boolean }> {
  if (!schedule) return { items: [], more: false };
  const need = query.perPage + 1; // one more tells whether another page follows
  const window: repo.MovedWindow = { durationMs: durationOf(schedule), from: query.from, to: query.to, after: query.after, limit: need };
  // an unmoved occurrence's place is its original start: those from the cursor's place on, the
  // cursor's own ties included, so one more (the occurrence starting there, if any, may be the cursor's)
  const expandAfter = query.after ? new Date(query.after.at.getTime() - 1) : undefined;
  const requested = need + (query.after ? 1 : 0);
  const starts = expand(schedule, query, expandAfter, requested);
  // the exceptions of the expanded slots and the moved occurrences in one query; more queries
  // only when moved occurrences leave the expanded slots short of a page, or are stale
  const first = await repo.exceptionsOfPage(db, eventId, starts.length > 0 ? { from: starts[0]!, to: starts.at(-1)! } : undefined, window);
  const [unmoved, moved] = await Promise.all([
    unmovedOccurrences(db, eventId, schedule, query, need, { starts, requested, exceptions: first.slots }),
    movedOccurrences(db, eventId, schedule, window, first.moved),
  ]);
  const merged = [...unmoved, ...moved].sort((a, b) => compare(positionOf(a), positionOf(b)));
  return { items: merged.slice(0, query.perPage), more: merged.length > query.perPage };
}

const expand = (schedule: Schedule, query: OccurrencePageQuery, after: Date | undefined, limit: number) =>
  occurrencesOf(schedule, { after, from: query.from, to: query.to, limit });

/**
 * The first `need` occurrences of the rule after `query.after` that sit in their original slot,
 * with the exceptions (title, status …) they have, from the expanded `batch` on. The moved ones
 * among the expanded are skipped, and the expansion goes on past them.
 */
async function unmovedOccurrences(
  db: Db,
  eventId: string,
  schedule: Schedule,
  query: OccurrencePageQuery,
  need: number,
  batch: { starts: Date[]; requested: number; exceptions: EventExceptionRow[] },
): Promise<ListedOccurrence[]> {
  const found: ListedOccurrence[] = [];
  let { starts, requested, exceptions: rows } = batch;
  for (;;) {
    if (starts.length === 0) return found;
    const exceptions = new Map(rows.map((e) => [e.instance_start.getTime(), e]));
    for (const start of starts) {
      const exception = exceptions.get(start.getTime());
      if (exception && isMoved(exception)) continue; // listed where it is, by movedOccurrences
      if (query.after && compare({ at: start, original: start }, query.after) <= 0) continue;
      found.push({ start, exception, at: start });
      if (found.length === need) return found;
    }
    if (starts.length < requested) return found; // the rule has no more
    requested = need;
    starts = expand(schedule, query, starts.at(-1), requested);
    rows = starts.length > 0 ? await repo.exceptionsBetween(db, eventId, starts[0], starts.at(-1)) : [];
  }
}

/** The first `window.limit` moved occurrences after `window.after` that lie, where they are now, in the range, from `rows` on. */
async function movedOccurrences(db: Db, eventId: string, schedule: Schedule, window: repo.MovedWindow, rows: EventExceptionRow[]): Promise<ListedOccurrence[]> {
  const found: ListedOccurrence[] = [];
  for (;;) {
    const listed = rows
      .map((exception) => ({ start: exception.instance_start, exception, at: placeOccurrence(window.durationMs, exception.instance_start, exception).start }))
      .sort((a, b) => compare(positionOf(a), positionOf(b)));
    for (const occurrence of listed) {
      // an exception whose occurrence a changed start no longer produces describes nothing
      if (!isOccurrenceOf(schedule, occurrence.start)) continue;
      found.push(occurrence);
      if (found.length === window.limit) return found;
    }
    if (rows.length < window.limit) return found;
    window = { ...window, after: positionOf(listed.at(-1)!) };
    rows = await repo.movedExceptionsIn(db, eventId, window);
  }
}
