/**
 * Tariffs an operator created with `convene tariffs create`, next to those of the configuration
 * (`[tariffs.definitions]`), which keep precedence on a shared name. The shape is the
 * configuration's: quotas by name, and the signaling modules and `<module>::<feature>` features
 * switched off. A user's `tariff_name` names a tariff of either kind.
 *
 * Frozen in time: this file imports nothing from `src/`. One statement per query (PGlite).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table tariffs (
    name text primary key check (char_length(name) between 1 and 255),
    quotas jsonb not null default '{}' check (jsonb_typeof(quotas) = 'object'),
    disabled_modules text[] not null default '{}',
    disabled_features text[] not null default '{}',
    created_at timestamptz not null default now()
  )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table tariffs`.execute(db);
}
