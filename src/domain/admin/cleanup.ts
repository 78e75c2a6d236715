/**
 * The operator's clean-up (`convene cleanup`): ad-hoc events (the dashboard's instant meetings)
 * created longer ago than a retention, with their rooms, and room invite codes that have expired.
 * OpenTalk runs the same two as jobs (`adhoc-event-cleanup`, 24 hours after creation by default,
 * and `invite-cleanup`). Deleting an ad-hoc event deletes its room as `DELETE /events/{id}` does
 * (invites, SIP config, streaming targets, assets and their files) and sends `event.cancelled` to
 * webhooks, but no cancellation mail: ad-hoc meetings announce nothing by mail when they are created either. A dry run lists what would go.
 */
import type { Db } from '../../db/schema.js';
import type { AssetStorage } from '../assets/asset-storage.js';
import * as events from '../events/events.repository.js';
import * as invites from '../invites/invites.repository.js';
import { queueEventWebhook } from '../webhooks/domain-events.js';

export interface CleanupOptions {
  now: Date;
  /** Ad-hoc events created before `now` minus this many milliseconds go. */
  adhocRetentionMs: number;
  dryRun: boolean;
}

export interface CleanupReport {
  adhocEvents: Array<{ id: string; room_id: string; title: string; created_at: Date }>;
  expiredInvites: Array<{ code: string; room_id: string; expiration: Date }>;
  /** Asset files whose removal failed (their rows are gone; the files are orphans to remove by hand). */
  assetFilesLeft: string[];
}

export async function cleanUp(db: Db, assetStorage: Pick<AssetStorage, 'delete'>, options: CleanupOptions): Promise<CleanupReport> {
  const createdBefore = new Date(options.now.getTime() - options.adhocRetentionMs);
  const adhocEvents = await events.listAdhocEventsCreatedBefore(db, createdBefore);
  const expired = (await invites.listExpiredInvites(db, options.now)).map(({ code, room_id, expiration }) => ({ code, room_id, expiration: expiration! }));
  const report: CleanupReport = { adhocEvents, expiredInvites: expired, assetFilesLeft: [] };
  if (options.dryRun) return report;

  for (const event of adhocEvents) {
    const assetKeys = await db.transaction().execute(async (trx) => {
      // their creation was reported to webhooks (`event.created`), so is their end
      await queueEventWebhook(trx, 'event.cancelled', event.id);
      return events.deleteEventReturningAssetKeys(trx, event.id, event.room_id);
    });
    // after the commit, as the event service does: a failed removal leaves an orphan file, never a row without bytes
    const results = await Promise.allSettled(assetKeys.map((key) => assetStorage.delete(key)));
    results.forEach((result, index) => result.status === 'rejected' && report.assetFilesLeft.push(assetKeys[index]!));
  }
  // the invites of the rooms deleted above went with them (cascade); what is left of the list goes now
  await invites.deleteExpiredInvites(
    db,
    expired.map((invite) => invite.code),
    options.now,
  );
  return report;
}
