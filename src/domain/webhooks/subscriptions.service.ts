/**
 * Webhook subscriptions: a user's own (for the rooms and meetings they created; another user's is
 * 404, as if it did not exist) and the operator's (`owner` null, managed with `convene webhooks`,
 * for every room and meeting). The secret is generated here and shown once, in the answer of
 * `create`.
 */
import { randomUUID } from 'node:crypto';
import type { components } from '../../../generated/openapi.js';
import type { Config } from '../../config/schema.js';
import type { Db, WebhookDeliveryRow, WebhookSubscriptionRow } from '../../db/schema.js';
import { errors } from '../../errors.js';
import type { Page, PageRequest } from '../paging.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './outbox.js';
import { newSecret } from './signature.js';
import { refusalOf } from './target-address.js';
import * as repository from './webhooks.repository.js';

type Schemas = components['schemas'];
export type WebhookSubscription = Schemas['WebhookSubscription'];
export type WebhookDelivery = Schemas['WebhookDelivery'];

/** A user's id, or null for the operator's subscriptions. */
export type SubscriptionOwner = string | null;

export interface WebhookSubscriptionService {
  create(owner: SubscriptionOwner, body: Schemas['WebhookSubscriptionCreate']): Promise<WebhookSubscription>;
  list(owner: SubscriptionOwner, page: PageRequest): Promise<Page<WebhookSubscription>>;
  get(owner: SubscriptionOwner, id: string): Promise<WebhookSubscription>;
  remove(owner: SubscriptionOwner, id: string): Promise<void>;
  resume(owner: SubscriptionOwner, id: string): Promise<WebhookSubscription>;
  deliveries(owner: SubscriptionOwner, id: string, page: PageRequest): Promise<Page<WebhookDelivery>>;
}

export function createWebhookSubscriptionService(db: Db, config: Config['webhooks']): WebhookSubscriptionService {
  async function find(owner: SubscriptionOwner, id: string): Promise<WebhookSubscriptionRow> {
    const row = await repository.findOwnedSubscription(db, owner, id);
    if (!row) throw errors.notFound();
    return row;
  }

  return {
    async create(owner, body) {
      const refusal = await refusalOf(body.url, config);
      if (refusal) throw errors.webhookUrlRefused(refusal);
      const secret = newSecret();
      const row = await db.transaction().execute(async (trx) => {
        if (owner !== null) {
          // the owner's row, locked: concurrent creates count one after the other
          await repository.lockSubscriber(trx, owner);
          const count = await repository.countSubscriptionsOf(trx, owner);
          // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-conversion -- a count is int8: the parser leaves a string above 2^53 (db/connect.ts)
          if (Number(count) >= config.max_subscriptions_per_user) {
            throw errors.webhookSubscriptionLimit(config.max_subscriptions_per_user);
          }
        }
        return repository.insertSubscription(trx, {
          id: randomUUID(),
          owner,
          url: body.url,
          secret,
          event_types: body.event_types ?? [...WEBHOOK_EVENT_TYPES],
          description: body.description ?? null,
        });
      });
      return { ...present(row), secret };
    },

    async list(owner, page) {
      const { total, rows } = await repository.pageOfOwnedSubscriptions(db, owner, page);
      return { total, items: rows.map(present) };
    },

    async get(owner, id) {
      return present(await find(owner, id));
    },

    async remove(owner, id) {
      const deleted = await repository.deleteOwnedSubscription(db, owner, id);
      if (Number(deleted.numDeletedRows) === 0) throw errors.notFound();
    },

    async resume(owner, id) {
      await find(owner, id);
      // what queued up while paused goes out now, not after the backoff it had reached
      const row = await db.transaction().execute((trx) => repository.resumeSubscription(trx, id));
      return present(row);
    },

    async deliveries(owner, id, page) {
      await find(owner, id);
      const { total, rows } = await repository.pageOfDeliveries(db, id, page);
      return { total, items: rows.map(presentDelivery) };
    },
  };
}

function present(row: WebhookSubscriptionRow): WebhookSubscription {
  return {
    id: row.id,
    url: row.url,
    event_types: row.event_types as WebhookEventType[],
    ...(row.description !== null ? { description: row.description } : {}),
    status: row.paused_at ? 'paused' : 'active',
    consecutive_failures: row.consecutive_failures,
    ...(row.paused_at ? { paused_at: row.paused_at.toISOString() } : {}),
    created_at: row.created_at.toISOString(),
  };
}

function presentDelivery(row: WebhookDeliveryRow & { type: string }): WebhookDelivery {
  const delivered = row.delivered_at !== null;
  return {
    id: String(row.id),
    message_id: row.message_id,
    event_type: row.type as WebhookEventType,
    status: delivered ? 'delivered' : 'pending',
    attempts: row.attempts,
    ...(row.last_status_code !== null ? { last_status_code: row.last_status_code } : {}),
    ...(row.last_error !== null ? { last_error: row.last_error } : {}),
    ...(!delivered ? { next_attempt_at: row.next_attempt_at.toISOString() } : {}),
    created_at: row.created_at.toISOString(),
    ...(row.delivered_at ? { delivered_at: row.delivered_at.toISOString() } : {}),
  };
}
