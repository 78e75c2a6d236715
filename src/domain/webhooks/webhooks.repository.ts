/**
 * The SQL of webhooks: subscriptions, the messages and deliveries queued with a change (the
 * outbox), and the delivery worker's claims, results and pruning.
 */
import { sql } from 'kysely';
import { countAndPage } from '../../db/paging.js';
import type { Db, WebhookDeliveryRow, WebhookSubscriptionRow } from '../../db/schema.js';
import type { PageRequest } from '../paging.js';
import { preparedQuery } from '../../db/prepared.js';

/** A user's id, or null for the operator's subscriptions. */
type Owner = string | null;

function owned(db: Db, owner: Owner) {
  const all = db.selectFrom('webhook_subscriptions');
  return owner === null ? all.where('owner', 'is', null) : all.where('owner', '=', owner);
}

export async function findOwnedSubscription(db: Db, owner: Owner, id: string): Promise<WebhookSubscriptionRow | undefined> {
  return owned(db, owner).selectAll().where('id', '=', id).executeTakeFirst();
}

/** Oldest first, the id breaking ties. */
export async function pageOfOwnedSubscriptions(db: Db, owner: Owner, page: PageRequest): Promise<{ total: number; rows: WebhookSubscriptionRow[] }> {
  return countAndPage(owned(db, owner), owned(db, owner).selectAll().orderBy('created_at').orderBy('id'), page);
}

/** Locks the user's row until the transaction ends (concurrent creates count one after the other); throws when the user is gone. */
export async function lockSubscriber(trx: Db, userId: string): Promise<void> {
  await trx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().executeTakeFirstOrThrow();
}

export async function countSubscriptionsOf(trx: Db, userId: string): Promise<number> {
  const { count } = await trx
    .selectFrom('webhook_subscriptions')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('owner', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(count);
}

export async function insertSubscription(
  trx: Db,
  values: { id: string; owner: Owner; url: string; secret: string; event_types: string[]; description: string | null },
): Promise<WebhookSubscriptionRow> {
  return trx.insertInto('webhook_subscriptions').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function deleteOwnedSubscription(db: Db, owner: Owner, id: string): Promise<{ numDeletedRows: bigint }> {
  const scope = db.deleteFrom('webhook_subscriptions').where('id', '=', id);
  return (owner === null ? scope.where('owner', 'is', null) : scope.where('owner', '=', owner)).executeTakeFirst();
}

/** Clears the pause and the failure count; what queued up while paused comes due now. Run it in a transaction. */
export async function resumeSubscription(trx: Db, id: string): Promise<WebhookSubscriptionRow> {
  const resumed = await trx
    .updateTable('webhook_subscriptions')
    .set({ paused_at: null, consecutive_failures: 0 })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  await trx
    .updateTable('webhook_deliveries')
    .set({ next_attempt_at: new Date() })
    .where('subscription_id', '=', id)
    .where('delivered_at', 'is', null)
    .execute();
  return resumed;
}

/** Newest first, with each delivery's event type. */
export async function pageOfDeliveries(
  db: Db,
  subscriptionId: string,
  page: PageRequest,
): Promise<{ total: number; rows: (WebhookDeliveryRow & { type: string })[] }> {
  const ofSubscription = db.selectFrom('webhook_deliveries').where('subscription_id', '=', subscriptionId);
  const ordered = ofSubscription
    .innerJoin('webhook_messages', 'webhook_messages.id', 'webhook_deliveries.message_id')
    .selectAll('webhook_deliveries')
    .select('webhook_messages.type')
    .orderBy('webhook_deliveries.id', 'desc');
  return countAndPage(ofSubscription, ordered, page);
}

/** A message as queued: its id, event type, subject and body, and the key naming its change (null: none). */
export type QueuedMessage = {
  id: string;
  type: string;
  subject: string;
  body: string;
  dedupeKey: string | null;
};

/**
 * Queues the messages, in their order, and a delivery of each to every subscription that wants it:
 * those of its owner and the operator's that asked for its type. One statement, whatever the number
 * of messages (signaling queues every join and leave, in storms of hundreds per room, and each round
 * trip to PostgreSQL costs more than the rest of a join's database work). A message is written only
 * when some subscription wants it, and not at all when a message of the same dedupe key was queued
 * already (by another instance), which then gets no deliveries either. The deliveries' ids follow
 * the messages' order: the worker sends a subject's deliveries in id order.
 */
const enqueueMessages = preparedQuery<
  { ids: string[]; types: string[]; subjects: string[]; bodies: string[]; dedupeKeys: (string | null)[]; owners: Owner[] },
  never
>(['ids', 'types', 'subjects', 'bodies', 'dedupeKeys', 'owners'], (db, m) => ({
  compile: () =>
    sql<never>`
        with queued as (
          select q.id, q.type, q.subject, q.body, q.dedupe_key, q.owner, q.position from unnest(${m.ids}::text[], ${m.types}::text[], ${m.subjects}::text[], ${m.bodies}::text[], ${m.dedupeKeys}::text[], ${m.owners}::uuid[])
            with ordinality as q(id, type, subject, body, dedupe_key, owner, position)),
        wanted as (
          select q.id, q.type, q.subject, q.body, q.dedupe_key, q.position, s.id as subscription_id
          from queued q join webhook_subscriptions s on (s.owner = q.owner or s.owner is null) and q.type = any(s.event_types)),
        message as (
          insert into webhook_messages (id, type, subject, body, dedupe_key)
          select distinct on (position) id, type, subject, body, dedupe_key from wanted order by position
          on conflict (dedupe_key) do nothing
          returning id)
        insert into webhook_deliveries (message_id, subscription_id, subject)
        select wanted.id, wanted.subscription_id, wanted.subject from wanted join message on message.id = wanted.id
        order by wanted.position, wanted.subscription_id`.compile(db),
}));

export async function queueMessages(db: Db, messages: readonly (QueuedMessage & { owner: Owner })[]): Promise<void> {
  if (messages.length === 0) return;
  await enqueueMessages.execute(db, {
    ids: messages.map((m) => m.id),
    types: messages.map((m) => m.type),
    subjects: messages.map((m) => m.subject),
    bodies: messages.map((m) => m.body),
    dedupeKeys: messages.map((m) => m.dedupeKey),
    owners: messages.map((m) => m.owner),
  });
}

/** What a meeting's webhook events carry. */
export async function findEventForWebhook(trx: Db, eventId: string) {
  return trx
    .selectFrom('events')
    .select(['id', 'room_id', 'title', 'is_time_independent', 'starts_at', 'ends_at', 'created_by'])
    .where('id', '=', eventId)
    .executeTakeFirst();
}

/** A delivery claimed for an attempt, with what the attempt sends. */
export interface ClaimedDelivery {
  id: number;
  attempts: number;
  subscription_id: string;
  message_id: string;
  body: string;
  url: string;
  secret: string;
}

/**
 * The deliveries that may be sent at `at`: due, of an active subscription not in `inFlight`, and the
 * oldest pending one of their subscription and subject (a receiver sees each room's and meeting's
 * events in order).
 */
const claimable = (at: Date, inFlight: readonly string[]) => sql`
    from webhook_deliveries d
    join webhook_subscriptions s on s.id = d.subscription_id
    where d.delivered_at is null and d.next_attempt_at <= ${at} and s.paused_at is null
      and ${inFlight.length === 0 ? sql`true` : sql`d.subscription_id <> all(${inFlight}::uuid[])`}
      and not exists (
        select 1 from webhook_deliveries e
        where e.subscription_id = d.subscription_id and e.subject = d.subject
          and e.delivered_at is null and e.id < d.id)`;

/** Leases the first claimable delivery until `leaseUntil` (`FOR UPDATE SKIP LOCKED`: no two instances take one). */
export async function claimDelivery(db: Db, at: Date, leaseUntil: Date, inFlight: readonly string[]): Promise<ClaimedDelivery | undefined> {
  const { rows } = await sql<ClaimedDelivery>`
      with claimed as (
        update webhook_deliveries set next_attempt_at = ${leaseUntil}
        where id = (select d.id ${claimable(at, inFlight)} order by d.next_attempt_at, d.id limit 1 for update of d skip locked)
        returning id, attempts, subscription_id, message_id)
      select c.id, c.attempts, c.subscription_id, c.message_id, m.body, s.url, s.secret
      from claimed c
      join webhook_messages m on m.id = c.message_id
      join webhook_subscriptions s on s.id = c.subscription_id`.execute(db);
  return rows[0];
}

export async function anythingClaimable(db: Db, at: Date, inFlight: readonly string[]): Promise<boolean> {
  const { rows } = await sql<{ found: boolean }>`select exists (select 1 ${claimable(at, inFlight)}) as found`.execute(db);
  return rows[0]?.found === true;
}

/** The delivery went out: recorded, and its subscription's run of failures ends. */
export async function markDelivered(db: Db, row: ClaimedDelivery, status: number, at: Date): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ delivered_at: at, attempts: row.attempts + 1, last_status_code: status, last_error: null })
    .where('id', '=', row.id)
    .execute();
  await db.updateTable('webhook_subscriptions').set({ consecutive_failures: 0 }).where('id', '=', row.subscription_id).execute();
}

/**
 * The attempt failed: recorded with its next attempt, and the subscription's failures counted; it
 * is paused (from `at`) at `pauseAfter` failures in a row. Answers the subscription's state after.
 */
export async function markFailed(
  db: Db,
  row: ClaimedDelivery,
  failure: { attempts: number; last_status_code: number | null; last_error: string; next_attempt_at: Date },
  at: Date,
  pauseAfter: number,
): Promise<{ paused_at: Date | null; consecutive_failures: number } | undefined> {
  await db.updateTable('webhook_deliveries').set(failure).where('id', '=', row.id).execute();
  return db
    .updateTable('webhook_subscriptions')
    .set((eb) => ({
      consecutive_failures: eb('consecutive_failures', '+', 1),
      paused_at: sql`case when consecutive_failures + 1 >= ${pauseAfter} then coalesce(paused_at, ${at}) else paused_at end`,
    }))
    .where('id', '=', row.subscription_id)
    .returning(['paused_at', 'consecutive_failures'])
    .executeTakeFirst();
}

/** Deletes deliveries delivered before `before`, then the older messages no delivery refers to any more. */
export async function pruneBefore(db: Db, before: Date): Promise<{ deliveries: number; messages: number }> {
  const deliveries = await db.deleteFrom('webhook_deliveries').where('delivered_at', '<', before).executeTakeFirst();
  // a message is written with its deliveries in one transaction: an old one without any has none to come
  const messages = await db
    .deleteFrom('webhook_messages')
    .where('created_at', '<', before)
    .where((eb) =>
      eb.not(
        eb.exists(eb.selectFrom('webhook_deliveries').select('webhook_deliveries.id').whereRef('webhook_deliveries.message_id', '=', 'webhook_messages.id')),
      ),
    )
    .executeTakeFirst();
  return { deliveries: Number(deliveries.numDeletedRows), messages: Number(messages.numDeletedRows) };
}
