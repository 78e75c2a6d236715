/**
 * Secrets the instances of one deployment must share without configuration (the key that signs page
 * cursors): generated once by whichever instance starts first, then read by all.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table service_secrets (
    name text primary key,
    value text not null,
    created_at timestamptz not null default now()
  )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table service_secrets`.execute(db);
}
