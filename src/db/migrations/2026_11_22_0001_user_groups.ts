/**
 * The groups of each registered user, as the identity provider's `x_grp` claim named them at the
 * user's last login (as the reference controller has it): the chat's group messages go to the room's
 * participants of one group. A login replaces the user's groups; they go with the user.
 *
 * Frozen in time: this file imports nothing from `src/`. One statement per query (PGlite).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // the primary key's index serves the one lookup: a user's groups
  await sql`create table user_groups (
    user_id uuid not null references users (id) on delete cascade,
    name text not null check (char_length(name) between 1 and 255),
    primary key (user_id, name)
  )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table user_groups`.execute(db);
}
