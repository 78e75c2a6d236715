/**
 * The configured database for a command other than `serve`: opened (on embedded PGlite, under the
 * data directory's lock, so a command refuses while a server holds it), migrated, handed to `use`,
 * and closed whatever happens.
 */
import type { Config } from '../config/schema.js';
import { openDatabase, type Database } from '../db/connect.js';
import { migrateToLatest } from '../db/migrate.js';

/** `PostgreSQL`, `PGlite in ./data`: where a command works, for its output. */
export function databaseTarget(config: Config): string {
  if (config.database.url) return 'PostgreSQL';
  return config.database.in_memory ? 'PGlite in memory' : `PGlite in ${config.database.data_dir}`;
}

export async function withDatabase<T>(config: Config, use: (database: Database) => Promise<T>): Promise<T> {
  const database = await openDatabase(config.database);
  try {
    return await use(database);
  } finally {
    await database.close();
  }
}

/** As withDatabase, on a database brought up to date first (admin commands read today's schema). */
export function withMigratedDatabase<T>(config: Config, use: (database: Database) => Promise<T>): Promise<T> {
  return withDatabase(config, async (database) => {
    await migrateToLatest(database.db);
    return use(database);
  });
}
