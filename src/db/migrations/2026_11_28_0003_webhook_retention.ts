/**
 * What pruning the webhook outbox after `[webhooks] retention_days` reads: delivered deliveries by
 * the time of delivery, and, for each old message, whether a delivery still refers to it (the same
 * index serves the cascade when a message is deleted).
 *
 * Frozen in time: this file imports nothing from `src/`. One statement per query (PGlite).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index webhook_deliveries_delivered_idx on webhook_deliveries (delivered_at) where delivered_at is not null`.execute(db);
  await sql`create index webhook_deliveries_message_idx on webhook_deliveries (message_id)`.execute(db);
  await sql`create index webhook_messages_created_idx on webhook_messages (created_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index webhook_messages_created_idx`.execute(db);
  await sql`drop index webhook_deliveries_message_idx`.execute(db);
  await sql`drop index webhook_deliveries_delivered_idx`.execute(db);
}
