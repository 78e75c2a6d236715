/**
 * Webhook subscriptions: a user's own (for the rooms and meetings they created; another user's is
 * 404, as if it did not exist) and the operator's (`owner` null, managed with `convene webhooks`,
 * for every room and meeting). The secret is generated here and shown once, in the answer of
 * `create`.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { components } from '../../../generated/openapi.js';
import type { Config } from '../../config/schema.js';
import { countAndPage } from '../../db/paging.js';
import type { DB, WebhookDeliveryRow, WebhookSubscriptionRow } from '../../db/schema.js';
import { errors } from '../../errors.js';
import type { Page, PageRequest } from '../users/user.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './outbox.js';
import { newSecret } from './signature.js';
import { refusalOf } from './target-address.js';

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

export function createWebhookSubscriptionService(db: Kysely<DB>, config: Config['webhooks']): WebhookSubscriptionService {
  const owned = (owner: SubscriptionOwner) => {
    const all = db.selectFrom('webhook_subscriptions');
    return owner === null ? all.where('owner', 'is', null) : all.where('owner', '=', owner);
  };
  async function find(owner: SubscriptionOwner, id: string): Promise<WebhookSubscriptionRow> {
    const row = await owned(owner).selectAll().where('id', '=', id).executeTakeFirst();
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
          await trx.selectFrom('users').select('id').where('id', '=', owner).forUpdate().executeTakeFirstOrThrow();
          const { count } = await trx
            .selectFrom('webhook_subscriptions')
            .select((eb) => eb.fn.countAll<string>().as('count'))
            .where('owner', '=', owner)
            .executeTakeFirstOrThrow();
          if (Number(count) >= config.max_subscriptions_per_user) {
            throw errors.webhookSubscriptionLimit(config.max_subscriptions_per_user);
          }
        }
        return trx
          .insertInto('webhook_subscriptions')
          .values({
            id: randomUUID(),
            owner,
            url: body.url,
            secret,
            event_types: body.event_types ?? [...WEBHOOK_EVENT_TYPES],
            description: body.description ?? null,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
      });
      return { ...present(row), secret };
    },

    async list(owner, page) {
      const { total, rows } = await countAndPage(owned(owner), owned(owner).selectAll().orderBy('created_at').orderBy('id'), page);
      return { total, items: rows.map(present) };
    },

    async get(owner, id) {
      return present(await find(owner, id));
    },

    async remove(owner, id) {
      const scope = db.deleteFrom('webhook_subscriptions').where('id', '=', id);
      const deleted = await (owner === null ? scope.where('owner', 'is', null) : scope.where('owner', '=', owner)).executeTakeFirst();
      if (Number(deleted.numDeletedRows) === 0) throw errors.notFound();
    },

    async resume(owner, id) {
      await find(owner, id);
      const row = await db.transaction().execute(async (trx) => {
        const resumed = await trx
          .updateTable('webhook_subscriptions')
          .set({ paused_at: null, consecutive_failures: 0 })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        // what queued up while paused goes out now, not after the backoff it had reached
        await trx
          .updateTable('webhook_deliveries')
          .set({ next_attempt_at: new Date() })
          .where('subscription_id', '=', id)
          .where('delivered_at', 'is', null)
          .execute();
        return resumed;
      });
      return present(row);
    },

    async deliveries(owner, id, page) {
      await find(owner, id);
      const ofSubscription = db.selectFrom('webhook_deliveries').where('subscription_id', '=', id);
      const ordered = ofSubscription
        .innerJoin('webhook_messages', 'webhook_messages.id', 'webhook_deliveries.message_id')
        .selectAll('webhook_deliveries')
        .select('webhook_messages.type')
        .orderBy('webhook_deliveries.id', 'desc');
      const { total, rows } = await countAndPage(ofSubscription, ordered, page);
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
