/**
 * `convene migrate`: applies pending migrations to the configured database. The service also
 * migrates at start; this is for deployments that migrate before rolling out (see the README's
 * "Running in production"). On embedded PGlite it refuses while a server holds the data directory.
 */
import type { Config } from '../config/schema.js';
import { migrateToLatest } from '../db/migrate.js';
import { databaseTarget, withDatabase } from './database.js';

export async function migrate(config: Config): Promise<void> {
  const applied = await withDatabase(config, (database) => migrateToLatest(database.db));
  const target = databaseTarget(config);
  console.log(applied.length > 0 ? `${target}: applied ${applied.join(', ')}` : `${target}: already up to date`);
}
