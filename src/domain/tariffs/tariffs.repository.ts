/**
 * All SQL of stored tariffs: those an operator created with `convene tariffs create`, next to the
 * configuration's (tariff-catalog.ts merges both, the configuration's first).
 */
import { sql, type Kysely } from 'kysely';
import type { Config, TariffDefinition } from '../../config/schema.js';
import type { DB } from '../../db/schema.js';
import { offeredModules } from './modules.js';
import { createTariffCatalog, type TariffCatalog } from './tariff-catalog.js';

/** The catalog the service builds at start: the configuration's tariffs and the stored ones, with the modules it offers. */
export async function loadTariffCatalog(db: Kysely<DB>, config: Pick<Config, 'tariffs' | 'media'>): Promise<TariffCatalog> {
  return createTariffCatalog(config.tariffs, offeredModules(config.media), await storedTariffDefinitions(db));
}

/** The configuration's tariffs alone: what a service serves while the database cannot be read. */
export function configuredTariffCatalog(config: Pick<Config, 'tariffs' | 'media'>): TariffCatalog {
  return createTariffCatalog(config.tariffs, offeredModules(config.media));
}

/** Every stored tariff by name, in the configuration's shape. */
export async function storedTariffDefinitions(db: Kysely<DB>): Promise<Record<string, TariffDefinition>> {
  const rows = await db.selectFrom('tariffs').select(['name', 'quotas', 'disabled_modules', 'disabled_features']).orderBy('name').execute();
  return Object.fromEntries(
    rows.map((row) => [row.name, { quotas: row.quotas, disabled_modules: row.disabled_modules, disabled_features: row.disabled_features }]),
  );
}

/** Stores a tariff; false when one of that name is stored already. */
export async function insertStoredTariff(db: Kysely<DB>, name: string, definition: TariffDefinition): Promise<boolean> {
  const inserted = await db
    .insertInto('tariffs')
    .values({
      name,
      quotas: JSON.stringify(definition.quotas),
      disabled_modules: definition.disabled_modules,
      disabled_features: definition.disabled_features,
    })
    .onConflict((conflict) => conflict.column('name').doNothing())
    .returning('name')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** How many users have each tariff name assigned (null: none, so the default). */
export async function userCountsByTariff(db: Kysely<DB>): Promise<Map<string | null, number>> {
  const rows = await db
    .selectFrom('users')
    .select(['tariff_name', sql<number>`count(*)::int`.as('users')])
    .groupBy('tariff_name')
    .execute();
  return new Map(rows.map((row) => [row.tariff_name, row.users]));
}
