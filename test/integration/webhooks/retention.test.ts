/**
 * The delivery log's retention (`[webhooks] retention_days`): the worker prunes, at start and then
 * every interval, the deliveries delivered longer ago than the retention and the old messages no
 * delivery refers to any more; undelivered deliveries stay however old, and so do their messages.
 * The rows are written directly with their ages (a paused subscription, so that nothing is sent).
 */
import { createHash, randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createWebhookWorker } from '../../../src/domain/webhooks/delivery-worker.js';
import { send } from '../../support/events.js';
import { dbOf, useTestApp } from '../../support/test-app.js';

const app = useTestApp({ webhooks: { allow_http: true, allow_private: true } });
const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
/** A message id as the outbox writes them (`msg_` and 32 hex digits), named for the test. */
const run = randomUUID();
const msg = (name: string) => `msg_${createHash('md5').update(`${run}:${name}`).digest('hex')}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('delivery log retention', () => {
  it('prunes delivered rows past retention_days and messages left without deliveries; keeps the rest', async () => {
    const ada = await app.login('ada');
    const created = await send(app, 'POST', '/webhook_subscriptions', { token: ada.accessToken, body: { url: 'http://127.0.0.1:9/hooks' } });
    expect(created.status).toBe(201);
    const subscription = created.json.id as string;
    const db = dbOf(app);
    await db.updateTable('webhook_subscriptions').set({ paused_at: new Date() }).where('id', '=', subscription).execute();

    const now = new Date();
    const ago = (ms: number) => new Date(now.getTime() - ms);
    const worker = createWebhookWorker({
      db,
      config: { ...app.config.webhooks, retention_days: 30 },
      logger: pino({ level: 'silent' }),
      now: () => now,
      pruneIntervalMs: 50,
    });
    worker.start();
    try {
      // written after the start, in one transaction as the outbox writes them: the next round prunes them
      await db.transaction().execute(async (trx) => {
        const message = async (id: string, createdAt: Date) => {
          await trx.insertInto('webhook_messages').values({ id, type: 'room.started', subject: 'room:x', body: '{}', created_at: createdAt }).execute();
        };
        const delivery = async (messageId: string, deliveredAt: Date | null) => {
          await trx
            .insertInto('webhook_deliveries')
            .values({ message_id: messageId, subscription_id: subscription, subject: 'room:x', delivered_at: deliveredAt, created_at: ago(100 * DAY_MS) })
            .execute();
        };
        await message(msg('old_delivered'), ago(40 * DAY_MS));
        await delivery(msg('old_delivered'), ago(30 * DAY_MS + MINUTE_MS)); // just past the retention: goes, and its message
        await message(msg('edge_delivered'), ago(40 * DAY_MS));
        await delivery(msg('edge_delivered'), ago(30 * DAY_MS - MINUTE_MS)); // just within it: stays
        await message(msg('undelivered'), ago(100 * DAY_MS));
        await delivery(msg('undelivered'), null); // never delivered: stays however old
        await message(msg('mixed'), ago(40 * DAY_MS));
        await delivery(msg('mixed'), ago(31 * DAY_MS)); // goes
        await delivery(msg('mixed'), null); // stays, and keeps its message
        await message(msg('orphan_old'), ago(30 * DAY_MS + MINUTE_MS)); // no delivery (its subscription deleted): goes
        await message(msg('orphan_recent'), ago(30 * DAY_MS - MINUTE_MS)); // stays
      });

      const ids = Object.fromEntries(
        ['old_delivered', 'edge_delivered', 'undelivered', 'mixed', 'orphan_old', 'orphan_recent'].map((name) => [name, msg(name)]),
      );
      const names = new Map(Object.entries(ids).map(([name, id]) => [id, name]));
      const state = async () => ({
        messages: (await db.selectFrom('webhook_messages').select('id').where('id', 'in', Object.values(ids)).execute()).map((r) => names.get(r.id)).sort(),
        deliveries: (
          await db.selectFrom('webhook_deliveries').select(['message_id', 'delivered_at']).where('subscription_id', '=', subscription).orderBy('id').execute()
        ).map((r) => `${names.get(r.message_id)}:${r.delivered_at ? 'delivered' : 'pending'}`),
      });
      const expected = {
        messages: ['edge_delivered', 'mixed', 'orphan_recent', 'undelivered'],
        deliveries: ['edge_delivered:delivered', 'undelivered:pending', 'mixed:pending'],
      };
      for (let waited = 0; JSON.stringify(await state()) !== JSON.stringify(expected); waited += 50) {
        if (waited > 5_000) expect(await state()).toEqual(expected);
        await sleep(50);
      }
      // and the delivery log the API shows is what is left
      const log = await send(app, 'GET', `/webhook_subscriptions/${subscription}/deliveries`, { token: ada.accessToken });
      expect(log.status).toBe(200);
      expect(log.json.map((d: { message_id: string }) => names.get(d.message_id)).sort()).toEqual(['edge_delivered', 'mixed', 'undelivered']);
    } finally {
      await worker.stop();
    }
  });
});
