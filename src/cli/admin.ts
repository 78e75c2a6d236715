/**
 * The admin commands an operator needs without SQL: tariffs, users and the clean-up. Each goes
 * through the domain's admin functions (src/domain/admin/) on the configured database, which must
 * be migrated (database.ts). On embedded PGlite they refuse while a server holds the data
 * directory: stop it first (PGlite is one process's database).
 *
 * Lists print a header and one tab-separated line per row (`column -t -s $'\t'` aligns them), or
 * JSON with --json.
 */
import { parseArgs } from 'node:util';
import type { Config, TariffDefinition } from '../config/schema.js';
import { AdminError } from '../domain/admin/admin-error.js';
import { cleanUp } from '../domain/admin/cleanup.js';
import { assignTariff, createTariff, listTariffs } from '../domain/admin/tariff-admin.js';
import { listUsers, setDisabled } from '../domain/admin/user-admin.js';
import { assetStorageFromConfig } from '../domain/assets/asset-storage.js';
import { KNOWN_MODULES } from '../domain/tariffs/modules.js';
import { withCurrentDatabase } from './database.js';
import { CliError, usageError } from './errors.js';

export const tariffsUsage = [
  'convene tariffs list [--json]',
  'convene tariffs create <name> [--quota <quota>=<value>]… [--disable-module <module>]… [--disable-feature <module>::<feature>]…',
  'convene tariffs assign <tariff> <user id or e-mail>',
].join('\n  ');
export const usersUsage = ['convene users list [--json]', 'convene users disable <user id or e-mail>', 'convene users enable <user id or e-mail>'].join('\n  ');
export const cleanupUsage = 'convene cleanup [--dry-run] [--adhoc-retention-hours <hours>]';

const DEFAULT_ADHOC_RETENTION_HOURS = 24;

/** Domain refusals become the command's one-line refusal. */
async function admin<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof AdminError) throw new CliError(err.message);
    throw err;
  }
}

function table(header: string[], rows: Array<Array<string | number>>): string {
  return [header, ...rows].map((row) => row.join('\t')).join('\n');
}

export async function tariffsCommand(config: () => Config, args: string[]): Promise<void> {
  const [action, ...rest] = args;
  if (action === 'list') {
    const { values } = parseArgs({ args: rest, options: { json: { type: 'boolean', default: false } } });
    const listing = await withCurrentDatabase(config(), (database) => listTariffs(database.db, config()));
    if (values.json) return console.log(JSON.stringify(listing, null, 2));
    const quotas = (quotas: Record<string, number>) =>
      Object.entries(quotas)
        .map(([name, value]) => `${name}=${value}`)
        .join(',') || '-';
    const off = (tariff: (typeof listing)[number]['tariff']) =>
      [...KNOWN_MODULES.map((module) => module.id).filter((id) => !tariff.enabled_modules.includes(id)), ...tariff.disabled_features].join(',') || '-';
    console.log(
      table(
        ['name', 'source', 'default', 'users', 'quotas', 'switched off', 'id'],
        listing.map(({ tariff, source, isDefault, users }) => [
          tariff.name,
          source,
          isDefault ? 'yes' : 'no',
          users,
          quotas(tariff.quotas),
          off(tariff),
          tariff.id,
        ]),
      ),
    );
    return;
  }
  if (action === 'create') {
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        quota: { type: 'string', multiple: true, default: [] },
        'disable-module': { type: 'string', multiple: true, default: [] },
        'disable-feature': { type: 'string', multiple: true, default: [] },
      },
    });
    if (positionals.length !== 1) throw usageError(`usage: ${tariffsUsage}`);
    const definition: TariffDefinition = {
      quotas: Object.fromEntries(values.quota.map(parseQuota)),
      disabled_modules: [...new Set(values['disable-module'])],
      disabled_features: [...new Set(values['disable-feature'])],
    };
    const tariff = await withCurrentDatabase(config(), (database) => admin(() => createTariff(database.db, config(), positionals[0]!, definition)));
    console.log(`created tariff ${tariff.name} (id ${tariff.id}); running instances serve it within a minute`);
    return;
  }
  if (action === 'assign') {
    const { positionals } = parseArgs({ args: rest, allowPositionals: true, options: {} });
    if (positionals.length !== 2) throw usageError(`usage: ${tariffsUsage}`);
    const [tariffName, user] = positionals as [string, string];
    const { userId } = await withCurrentDatabase(config(), (database) => admin(() => assignTariff(database.db, config(), tariffName, user)));
    console.log(`assigned tariff ${tariffName} to user ${userId}`);
    return;
  }
  throw usageError(`usage: ${tariffsUsage}`);
}

function parseQuota(text: string): [string, number] {
  const match = /^([A-Za-z0-9_]{1,64})=(\d{1,10})$/.exec(text);
  if (!match) throw usageError(`--quota takes <quota>=<whole number>, e.g. max_storage=1073741824; got "${text}"`);
  return [match[1]!, Number(match[2])];
}

export async function usersCommand(config: () => Config, args: string[]): Promise<void> {
  const [action, ...rest] = args;
  if (action === 'list') {
    const { values } = parseArgs({ args: rest, options: { json: { type: 'boolean', default: false } } });
    const users = await withCurrentDatabase(config(), (database) => listUsers(database.db));
    const rows = users.map((user) => ({
      id: user.id,
      email: user.email,
      display_name: user.display_name,
      tariff: user.tariff_name,
      disabled_at: user.disabled_at,
      created_at: user.created_at,
    }));
    if (values.json) return console.log(JSON.stringify(rows, null, 2));
    console.log(
      table(
        ['id', 'email', 'display name', 'tariff', 'status', 'created'],
        rows.map((user) => [
          user.id,
          user.email,
          user.display_name,
          user.tariff ?? '(default)',
          user.disabled_at ? `disabled since ${user.disabled_at.toISOString()}` : 'enabled',
          user.created_at.toISOString(),
        ]),
      ),
    );
    return;
  }
  if (action === 'disable' || action === 'enable') {
    const { positionals } = parseArgs({ args: rest, allowPositionals: true, options: {} });
    if (positionals.length !== 1) throw usageError(`usage: ${usersUsage}`);
    const user = await withCurrentDatabase(config(), (database) => admin(() => setDisabled(database.db, positionals[0]!, action === 'disable')));
    console.log(`${action}d user ${user.id} (${user.email})`);
    return;
  }
  throw usageError(`usage: ${usersUsage}`);
}

export async function cleanupCommand(config: () => Config, args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      'dry-run': { type: 'boolean', default: false },
      'adhoc-retention-hours': { type: 'string', default: String(DEFAULT_ADHOC_RETENTION_HOURS) },
    },
  });
  const hours = Number(values['adhoc-retention-hours']);
  if (positionals.length > 0 || !/^\d+(\.\d+)?$/.test(values['adhoc-retention-hours']) || hours > 24 * 366 * 100) {
    throw usageError(`usage: ${cleanupUsage} (hours: a number from 0)`);
  }
  const dryRun = values['dry-run'];
  const cfg = config();
  const storage = await assetStorageFromConfig(cfg);
  try {
    const report = await withCurrentDatabase(cfg, (database) =>
      cleanUp(database.db, storage, { now: new Date(), adhocRetentionMs: hours * 3_600_000, dryRun }),
    );
    const verb = dryRun ? 'would delete' : 'deleted';
    console.log(`${verb} ${report.adhocEvents.length} ad-hoc event(s) created more than ${hours} hour(s) ago, with their rooms`);
    for (const event of report.adhocEvents)
      console.log(`  event ${event.id} room ${event.room_id} created ${event.created_at.toISOString()} ${JSON.stringify(event.title)}`);
    console.log(`${verb} ${report.expiredInvites.length} expired invite code(s)`);
    for (const invite of report.expiredInvites) console.log(`  invite ${invite.code} room ${invite.room_id} expired ${invite.expiration.toISOString()}`);
    if (report.assetFilesLeft.length > 0) {
      console.error(`convene: ${report.assetFilesLeft.length} asset file(s) could not be removed: ${report.assetFilesLeft.join(', ')}`);
      process.exitCode = 1;
    }
  } finally {
    await storage.close();
  }
}
