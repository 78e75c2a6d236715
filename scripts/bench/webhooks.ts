// Webhook delivery (issue 20) against a real instance on 127.0.0.1 (PGlite in memory, or PostgreSQL
// with DATABASE_URL) and real receivers on loopback:
// 1. deliveries/s of one instance: 20 subscriptions are paused while 50 meetings are created (1,000
//    deliveries queue up), then resumed; the time until the receiver has them all.
// 2. HTTP latency (sequential POST /v1/events, each queueing deliveries) with one fast receiver,
//    then with a receiver that answers after 5 s subscribed too: p50 and p99 of both (the outbox
//    drained before each).
// Run: npx tsx scripts/bench/webhooks.ts   (or: DATABASE_URL=postgres://… npx tsx scripts/bench/webhooks.ts)
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestApp } from '../../test/support/test-app.js';
import { jsonCaller, measureSequential } from './events-data.js';

const SUBSCRIPTIONS = 20;
const EVENTS = 50;

async function receiver(delayMs: number) {
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      setTimeout(() => res.writeHead(200).end(), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    count: () => received,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

const app = await startTestApp({
  webhooks: { allow_http: true, allow_private: true, max_subscriptions_per_user: 1000, poll_interval_ms: 100 },
});
const fast = await receiver(0);
const slow = await receiver(5_000);
try {
  await app.login('bench');
  const token = await app.issuer.accessToken({ sub: 'sub-bench' }, { expiresIn: 3600 });
  const call = jsonCaller(app.url, token);
  const db = app.convene.database.db;
  const { concurrency } = app.config.webhooks;
  console.log(`${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite in memory'}, [webhooks] concurrency ${concurrency}\n`);

  const ids: string[] = [];
  for (let i = 0; i < SUBSCRIPTIONS; i++) ids.push((await call('POST', '/webhook_subscriptions', { url: fast.url, event_types: ['event.created'] })).json.id);
  await db.updateTable('webhook_subscriptions').set({ paused_at: new Date() }).execute();
  for (let i = 0; i < EVENTS; i++) await call('POST', '/events', { title: `Bench ${i}`, description: '', is_time_independent: true });
  const total = SUBSCRIPTIONS * EVENTS;
  const started = performance.now();
  for (const id of ids) await call('POST', `/webhook_subscriptions/${id}/resume`);
  while (fast.count() < total) await new Promise((resolve) => setTimeout(resolve, 5));
  const seconds = (performance.now() - started) / 1000;
  console.log(`${total} deliveries from one instance in ${seconds.toFixed(2)} s: ${(total / seconds).toFixed(0)} deliveries/s\n`);

  // one fast subscription from here on, and an empty outbox before each measurement
  for (const id of ids) await call('DELETE', `/webhook_subscriptions/${id}`);
  await call('POST', '/webhook_subscriptions', { url: fast.url, event_types: ['event.created'] });
  const drained = async () => {
    for (;;) {
      const { pending } = await db
        .selectFrom('webhook_deliveries')
        .innerJoin('webhook_subscriptions', 'webhook_subscriptions.id', 'webhook_deliveries.subscription_id')
        .select((eb) => eb.fn.countAll<string>().as('pending'))
        .where('delivered_at', 'is', null)
        .where('url', '=', fast.url)
        .executeTakeFirstOrThrow();
      if (Number(pending) === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const create = () => call('POST', '/events', { title: 'Latency', description: '', is_time_independent: true });
  const report = (label: string, r: { rps: number; p50: number; p99: number }) =>
    console.log(`${label.padEnd(56)} ${r.rps.toFixed(0).padStart(5)} req/s   p50 ${r.p50.toFixed(2).padStart(7)} ms   p99 ${r.p99.toFixed(2).padStart(7)} ms`);
  report('POST /v1/events, one fast receiver', await measureSequential(300, create));
  await drained();
  await call('POST', '/webhook_subscriptions', { url: slow.url, event_types: ['event.created'] });
  report('POST /v1/events, and a receiver answering after 5 s', await measureSequential(300, create));
  await drained();
  console.log(`\nthe slow receiver got ${slow.count()} requests meanwhile (one attempt at a time per subscription, 5 s each)`);
} finally {
  await app.close();
  await fast.close();
  await slow.close();
}
