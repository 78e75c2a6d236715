/**
 * A cheap fingerprint of everything the database holds: one md5 per table over its rows (as text,
 * in a fixed order), in one round trip. Two equal fingerprints mean no row was added, removed or
 * changed; an unequal one names the tables that changed. The hostile-input properties take one
 * after every rejected request.
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../../src/db/schema.js';

export type Fingerprint = Record<string, string>;

export function databaseFingerprint(db: Kysely<DB>): () => Promise<Fingerprint> {
  let query: ReturnType<typeof sql<Fingerprint>> | undefined;
  return async () => {
    if (!query) {
      const { rows } = await sql<{ tablename: string }>`
        select tablename from pg_tables
        where schemaname = current_schema() and tablename not like 'kysely\\_%'
        order by tablename`.execute(db);
      const columns = rows.map(
        ({ tablename }) => sql`(select md5(coalesce(string_agg(t::text, ',' order by t::text), '')) from ${sql.table(tablename)} t) as ${sql.ref(tablename)}`,
      );
      query = sql<Fingerprint>`select ${sql.join(columns)}`;
    }
    return (await query.execute(db)).rows[0]!;
  };
}
