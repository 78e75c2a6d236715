/**
 * Runs the migrations of `./migrations/` with Kysely's Migrator. They are imported statically (not
 * found by reading the directory), so the same code works under tsx, vitest and from the compiled
 * `dist/`. A new migration is a new file there plus one line in `migrations` below; a test checks
 * that every file is listed.
 */
import type { Kysely } from 'kysely';
import { Migrator, type Migration } from 'kysely/migration';

import * as initial from './migrations/2026_11_21_0001_initial.js';
import * as serviceSecrets from './migrations/2026_11_21_0002_service_secrets.js';
import * as userGroups from './migrations/2026_11_22_0001_user_groups.js';
import * as disabledUsers from './migrations/2026_11_27_0001_disabled_users.js';
import * as eventMeetingDetails from './migrations/2026_11_27_0001_event_meeting_details.js';
import * as eventSpans from './migrations/2026_11_27_0001_event_spans.js';
import * as storedTariffs from './migrations/2026_11_27_0002_stored_tariffs.js';
import * as webhooks from './migrations/2026_11_28_0001_webhooks.js';
import * as calendarFeeds from './migrations/2026_11_28_0002_calendar_feeds.js';
import * as webhookRetention from './migrations/2026_11_28_0003_webhook_retention.js';
import * as eventSpanClass from './migrations/2026_11_29_0001_event_span_class.js';

/** By name; names sort in the order they apply. */
export const migrations: Readonly<Record<string, Migration>> = {
  '2026_11_21_0001_initial': initial,
  '2026_11_21_0002_service_secrets': serviceSecrets,
  '2026_11_22_0001_user_groups': userGroups,
  '2026_11_27_0001_disabled_users': disabledUsers,
  '2026_11_27_0001_event_meeting_details': eventMeetingDetails,
  '2026_11_27_0001_event_spans': eventSpans,
  '2026_11_27_0002_stored_tariffs': storedTariffs,
  '2026_11_28_0001_webhooks': webhooks,
  '2026_11_28_0002_calendar_feeds': calendarFeeds,
  '2026_11_28_0003_webhook_retention': webhookRetention,
  '2026_11_29_0001_event_span_class': eventSpanClass,
};

/** Applies every pending migration (in one transaction, under Kysely's migration lock); returns their names. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run on any schema; Kysely types that as Kysely<any>
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results = [] } = await migrator.migrateToLatest();
  if (error) {
    const failed = results.find((result) => result.status === 'Error')?.migrationName;
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a non-Error thrown by a migration is reported as it stringifies
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`database migration${failed ? ` ${failed}` : 's'} failed: ${reason}`, { cause: error });
  }
  return results.filter((result) => result.status === 'Success').map((result) => result.migrationName);
}

/** The names of the migrations not yet applied, in order. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as migrateToLatest
export async function pendingMigrations(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  return (await migrator.getMigrations()).filter((migration) => migration.executedAt === undefined).map((migration) => migration.name);
}
