/**
 * A user's calendar feed (`/v1/calendar_feeds/{token}/meetings.ics`): at most one per user. Only
 * the SHA-256 of its secret token is kept (hex), so a copy of the database does not open anyone's feed;
 * the feed is found by the hash of the token presented (an index lookup, no comparison in code).
 * Issuing a new token replaces the row, which is what makes the old URL stop working.
 *
 * Frozen in time: this file imports nothing from `src/`. One statement per query (PGlite).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table calendar_feeds (
    user_id uuid primary key references users (id) on delete cascade,
    token_hash text not null unique check (token_hash ~ '^[0-9a-f]{64}$'),
    created_at timestamptz not null default now()
  )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table calendar_feeds`.execute(db);
}
