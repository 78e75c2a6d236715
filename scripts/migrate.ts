/**
 * `npm run migrate`: applies pending migrations to the configured database (the same configuration
 * as the service: convene.toml, CONVENE_* and DATABASE_URL). The service also migrates at start;
 * this is for deployments that migrate before rolling out. On embedded PGlite it refuses to run
 * while a server holds the data directory.
 */
import { loadConfigOrExit } from '../src/config/load.js';
import { openDatabase } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';

async function main(): Promise<number> {
  const config = loadConfigOrExit();
  const target = config.database.url ? 'PostgreSQL' : config.database.in_memory ? 'PGlite in memory' : `PGlite in ${config.database.data_dir}`;
  const database = await openDatabase(config.database);
  try {
    const applied = await migrateToLatest(database.db);
    console.log(applied.length > 0 ? `${target}: applied ${applied.join(', ')}` : `${target}: already up to date`);
    return 0;
  } finally {
    await database.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
