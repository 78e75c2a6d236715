/**
 * `GET /events` with a time range in index order, whatever the number of the caller's events. The
 * range is an overlap with the event's span (`span_start`, `span_end`) and the page is in
 * `starts_at` order: one B-tree cannot bound both, so the listing read every event of its caller
 * (1 s at 50,000). `span_class` sorts events by how far their span reaches from `starts_at`:
 *   0: at most 2 days either way (a meeting, an all-day event, a short series),
 *   1: at most 400 days either way (a series of up to a year),
 *   2: further, or without end (an unbounded series),
 *   null: no span (time-independent).
 * Within a class the listing bounds `starts_at` by the range widened by the class's reach, so that
 * a page reads its own rows and those near the range, not the caller's whole history.
 *
 * Frozen in time: this file imports nothing from `src/`. One statement per query (PGlite).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // timestamptz − timestamptz and interval comparisons are immutable, as a generated column needs
  await sql`alter table events add column span_class smallint generated always as (
    case
      when span_start is null then null
      when span_end is null then 2
      when span_end - starts_at <= interval '48 hours' and starts_at - span_start <= interval '48 hours' then 0
      when span_end - starts_at <= interval '9600 hours' and starts_at - span_start <= interval '9600 hours' then 1
      else 2
    end
  ) stored`.execute(db);
  await sql`create index events_listing_idx on events (created_by, span_class, starts_at nulls first, created_at, id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index events_listing_idx`.execute(db);
  await sql`alter table events drop column span_class`.execute(db);
}
