/**
 * Whether an event shows its meeting details (an invite code, the call-in number, id and PIN, the
 * streams' public URLs) to everyone who may read the room's event (as the reference controller's
 * `show_meeting_details`). Existing events keep them hidden, as the reference's default is.
 *
 * Frozen in time: this file imports nothing from `src/`. One statement per query (PGlite).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table events add column show_meeting_details boolean not null default false`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table events drop column show_meeting_details`.execute(db);
}
