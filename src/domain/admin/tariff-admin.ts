/**
 * The operator's tariffs (`convene tariffs …`). Tariffs come from the configuration
 * (`[tariffs.definitions]`) and from the database (created here); the catalog merges both, the
 * configuration's first. Assigning sets a user's `tariff_name`; it is refused while `[tariffs]
 * claim` is configured, since each login then sets the tariff from the identity provider's claim.
 */
import type { Config, TariffDefinition } from '../../config/schema.js';
import type { Db } from '../../db/schema.js';
import { KNOWN_MODULES, offeredModules } from '../tariffs/modules.js';
import { buildTariff, type Tariff } from '../tariffs/tariff-catalog.js';
import * as tariffs from '../tariffs/tariffs.repository.js';
import * as users from '../users/users.repository.js';
import { AdminError } from './admin-error.js';
import { findUser } from './user-admin.js';

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export interface TariffListing {
  tariff: Tariff;
  source: 'configuration' | 'database';
  isDefault: boolean;
  /** Users who get this tariff (for the default: also those with none or an unknown one assigned). */
  users: number;
}

export async function listTariffs(db: Db, config: Pick<Config, 'tariffs' | 'media'>): Promise<TariffListing[]> {
  const catalog = await tariffs.loadTariffCatalog(db, config);
  const counts = await tariffs.userCountsByTariff(db);
  let defaulted = 0; // users whose tariff_name is unset or names no tariff
  for (const [name, count] of counts) if (name === null || !catalog.byName(name)) defaulted += count;
  return catalog.all().map(({ tariff, source }) => {
    const isDefault = tariff.name === config.tariffs.default;
    return { tariff, source, isDefault, users: (counts.get(tariff.name) ?? 0) + (isDefault ? defaulted : 0) };
  });
}

/** Stores a new tariff; refuses a name the configuration or the database already has, and modules or features Convene does not know. */
export async function createTariff(db: Db, config: Pick<Config, 'tariffs' | 'media'>, name: string, definition: TariffDefinition): Promise<Tariff> {
  if (!NAME.test(name)) throw new AdminError('a tariff name is 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit');
  if (Object.hasOwn(config.tariffs.definitions, name)) throw new AdminError(`the tariff "${name}" is defined in the configuration`);
  const modules = new Map(KNOWN_MODULES.map((module) => [module.id, module]));
  for (const module of definition.disabled_modules) {
    if (!modules.has(module)) throw new AdminError(`unknown module "${module}" (modules: ${[...modules.keys()].join(', ')})`);
  }
  for (const feature of definition.disabled_features) {
    const [module, name, ...rest] = feature.split('::');
    if (rest.length > 0 || !name || !modules.get(module!)?.features.includes(name)) {
      const known = KNOWN_MODULES.flatMap((m) => m.features.map((f) => `${m.id}::${f}`));
      throw new AdminError(`unknown feature "${feature}" (features: ${known.join(', ') || 'none'})`);
    }
  }
  let tariff: Tariff;
  try {
    tariff = buildTariff(name, definition, offeredModules(config.media));
  } catch (err) {
    throw new AdminError((err as Error).message.replace(/^tariffs\.definitions\.[^.]+\./, ''));
  }
  if (!(await tariffs.insertStoredTariff(db, name, definition))) throw new AdminError(`the tariff "${name}" exists already`);
  return tariff;
}

/** Assigns a known tariff to a user (by id or e-mail address); answers the user's id. */
export async function assignTariff(db: Db, config: Pick<Config, 'tariffs' | 'media'>, tariffName: string, userKey: string): Promise<{ userId: string }> {
  if (config.tariffs.claim !== undefined) {
    throw new AdminError(`tariffs are assigned by the identity provider's "${config.tariffs.claim}" claim at every login ([tariffs] claim); assign it there`);
  }
  const catalog = await tariffs.loadTariffCatalog(db, config);
  if (!catalog.byName(tariffName)) {
    throw new AdminError(
      `unknown tariff "${tariffName}" (tariffs: ${catalog
        .all()
        .map(({ tariff }) => tariff.name)
        .join(', ')})`,
    );
  }
  const user = await findUser(db, userKey);
  await users.setUserTariff(db, user.id, tariffName);
  return { userId: user.id };
}
