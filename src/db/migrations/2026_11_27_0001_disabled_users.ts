/**
 * An operator can disable a user (`convene users disable`): from then on their logins and access
 * tokens are refused, while their rooms, events and invitations stay as they are. null: enabled.
 *
 * Frozen in time: this file imports nothing from `src/`. One statement per query (PGlite).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table users add column disabled_at timestamptz`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table users drop column disabled_at`.execute(db);
}
