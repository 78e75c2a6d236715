/**
 * Where an event's occurrences actually lie, for the time range of `GET /events`: `span_start` is
 * the earliest start and `span_end` the latest end of any occurrence, its moved occurrences (the
 * exceptions with their own times) included; `span_end` is null for an unbounded series. Until now
 * the range compared `starts_at` and `range_end`, the series as its rule makes it, so a series whose
 * only occurrence in the range had been moved there was left out. `range_end` keeps its meaning
 * (the end of the rule's last occurrence).
 *
 * The service keeps both columns current on every write of an event's times or of an exception.
 * The backfill here counts every exception with times of its own; the service also leaves out those
 * whose original start a later change of the event's start no longer produces, and does so at the
 * event's next such write.
 *
 * Frozen in time: this file imports nothing from `src/`. One statement per query (PGlite).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table events add column span_start timestamptz, add column span_end timestamptz`.execute(db);
  await sql`update events set span_start = starts_at, span_end = range_end`.execute(db);
  // least/greatest skip nulls: a null span_end (unbounded) stays null through the case
  await sql`update events e set
      span_start = least(e.span_start, moved.first_start),
      span_end = case when e.span_end is null then null else greatest(e.span_end, moved.last_end) end
    from (
      select x.event_id,
        min(coalesce(x.starts_at, x.instance_start)) as first_start,
        max(coalesce(x.ends_at, coalesce(x.starts_at, x.instance_start) + (ev.ends_at - ev.starts_at))) as last_end
      from event_exceptions x join events ev on ev.id = x.event_id
      where (x.starts_at is not null or x.ends_at is not null) and not ev.is_time_independent
      group by x.event_id
    ) moved
    where moved.event_id = e.id`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table events drop column span_start, drop column span_end`.execute(db);
}
