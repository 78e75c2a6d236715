/**
 * The configured database for a command other than `serve`: opened (on embedded PGlite, under the
 * data directory's lock, so a command refuses while a server holds it), migrated, handed to `use`,
 * and closed whatever happens.
 */
import type { Config } from '../config/schema.js';
import { openDatabase, type Database } from '../db/connect.js';
import { pendingMigrations } from '../db/migrate.js';
import { CliError } from './errors.js';

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

/**
 * As withDatabase, for the admin commands, which read and write today's schema: a database with
 * migrations pending (an upgrade not yet migrated, or never served) is refused rather than migrated
 * behind the operator's back while older instances may still be running on it.
 */
export function withCurrentDatabase<T>(config: Config, use: (database: Database) => Promise<T>): Promise<T> {
  return withDatabase(config, async (database) => {
    const pending = await pendingMigrations(database.db);
    if (pending.length > 0) {
      throw new CliError(`${databaseTarget(config)} has ${pending.length} migration(s) pending (${pending.join(', ')}); run \`convene migrate\` first`);
    }
    return use(database);
  });
}
