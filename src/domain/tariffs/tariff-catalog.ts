import type { components } from '../../../generated/openapi.js';
import type { Config, TariffDefinition } from '../../config/schema.js';
import { SIGNALING_MODULES, type SignalingModuleDefinition } from './modules.js';
import { tariffIdFor } from './tariff-id.js';

/** The Tariff of the contract (the contract; `modules` as an array per docs/decisions.md). */
export type Tariff = components['schemas']['Tariff'];
export type TariffModule = components['schemas']['TariffModule'];

export interface TariffCatalog {
  /** The tariff users get when their own is unset or no longer configured. */
  readonly defaultTariff: Tariff;
  byName(name: string): Tariff | undefined;
  /** Every tariff, the configuration's first, each with where it is defined. */
  all(): ReadonlyArray<{ tariff: Tariff; source: 'configuration' | 'database' }>;
  /** Takes the stored tariffs as they are now (the service re-reads them every minute); the configured ones stay. */
  replaceStored(stored: Readonly<Record<string, TariffDefinition>>): void;
  /** A user's tariff; a name the configuration no longer knows falls back to the default. */
  forUser(user: { tariff_name: string | null }): Tariff;
}

type TariffsConfig = Config['tariffs'];

const MAX_QUOTA = 4_294_967_295; // the contract's unsigned 32-bit limit

/**
 * Builds every tariff once at start-up, the configured ones and the `stored` ones (created with
 * `convene tariffs create`; on a name both define, the configuration's wins); the objects handed
 * out are frozen and shared. Throws on a configuration that cannot be served (no default tariff, a
 * quota out of range), so a bad file stops the service instead of answering with a broken tariff
 * later.
 */
export function createTariffCatalog(
  config: TariffsConfig,
  modules: readonly SignalingModuleDefinition[] = SIGNALING_MODULES,
  stored: Readonly<Record<string, TariffDefinition>> = {},
): TariffCatalog {
  const configured = new Map<string, Tariff>();
  for (const [name, definition] of Object.entries(config.definitions)) {
    configured.set(name, buildTariff(name, definition, modules));
  }
  const defaultTariff = configured.get(config.default);
  if (!defaultTariff) {
    throw new Error(`tariffs.default names "${config.default}", which is not in tariffs.definitions`);
  }
  // replaced as a whole, never changed in place, so a reader sees one generation or the next
  let tariffs = configured;
  const withStored = (definitions: Readonly<Record<string, TariffDefinition>>) => {
    const all = new Map(configured);
    for (const [name, definition] of Object.entries(definitions)) {
      if (!all.has(name)) all.set(name, buildTariff(name, definition, modules));
    }
    return all;
  };
  tariffs = withStored(stored);
  return {
    defaultTariff,
    byName: (name) => tariffs.get(name),
    all: () => [...tariffs.values()].map((tariff) => ({ tariff, source: configured.has(tariff.name) ? 'configuration' : 'database' })),
    forUser: (user) => (user.tariff_name === null ? undefined : tariffs.get(user.tariff_name)) ?? defaultTariff,
    replaceStored: (definitions) => {
      tariffs = withStored(definitions);
    },
  };
}

export function buildTariff(name: string, definition: TariffDefinition, modules: readonly SignalingModuleDefinition[]): Tariff {
  for (const [quota, value] of Object.entries(definition.quotas)) {
    if (!Number.isInteger(value) || value < 0 || value > MAX_QUOTA) {
      throw new Error(`tariffs.definitions.${name}.quotas.${quota} must be an integer from 0 to ${MAX_QUOTA}, got ${value}`);
    }
  }
  const disabledModules = new Set(definition.disabled_modules);
  const disabledFeatures = [...new Set(definition.disabled_features)];
  const disabled = new Set(disabledFeatures);
  const enabled = modules.filter((module) => !disabledModules.has(module.id));
  return deepFreeze({
    id: tariffIdFor(name),
    name,
    quotas: { ...definition.quotas },
    enabled_modules: enabled.map((module) => module.id),
    disabled_features: disabledFeatures,
    modules: enabled.map((module) => ({
      id: module.id,
      features: module.features.filter((feature) => !disabled.has(`${module.id}::${feature}`)),
    })),
  });
}

function deepFreeze<T extends object>(value: T): T {
  for (const inner of Object.values(value)) {
    if (inner !== null && typeof inner === 'object') deepFreeze(inner);
  }
  return Object.freeze(value);
}
