// Webhook delivery (issue 20) against a real instance on 127.0.0.1 (PGlite in memory, or PostgreSQL
// with DATABASE_URL) and real receivers on loopback:
// 1. deliveries/s of one instance: 20 subscriptions are paused while 50 meetings are created (1,000
//    deliveries queue up), then resumed; the time until the receiver has them all.
// 2. After a warm-up round, in the same run and with the outbox drained before each: one fast
//    receiver; a second fast receiver subscribed beside it (twice the delivery work); that one
//    replaced by a receiver answering after 5 s. Each case measures HTTP latency (sequential
//    POST /v1/events, each queueing deliveries) and signaling fan-out (a room of PARTICIPANTS sockets;
//    the moderator starts and stops a timer, each a broadcast to everyone and a webhook event; the
//    time from the command until each participant has the frame): p50 and p99, and the ratio of the
//    slow case to the second fast one, which does the same work minus the slowness.
// Run: npx tsx scripts/bench/webhooks.ts   (or: DATABASE_URL=postgres://… npx tsx scripts/bench/webhooks.ts)
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { connectSignaling, type SignalingConnection } from '../../packages/client/src/index.js';
import { startTestApp } from '../../test/support/test-app.js';
import { jsonCaller, measureSequential } from './events-data.js';

const SUBSCRIPTIONS = 20;
const EVENTS = 50;
const PARTICIPANTS = 50;
const BROADCASTS = 40;
const EVENT_TYPES = ['event.created', 'timer.started', 'timer.stopped'];

interface Latency {
  p50: number;
  p99: number;
}

function percentiles(times: number[]): Latency {
  times.sort((a, b) => a - b);
  const pct = (p: number) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))]!;
  return { p50: pct(50), p99: pct(99) };
}

/** The time from `send()` until each socket has the `timer` frame `message`; answers the first socket's frame. */
async function broadcast(sockets: SignalingConnection[], message: 'started' | 'stopped', send: () => void, times: number[]) {
  const sent = { at: 0 };
  const arrivals = sockets.map((socket) =>
    socket.next('timer', message, { timeoutMs: 30_000 }).then((frame) => (times.push(performance.now() - sent.at), frame)),
  );
  sent.at = performance.now();
  send();
  return (await Promise.all(arrivals))[0]!;
}

/** BROADCASTS timer starts and stops by the first socket (the moderator), each a broadcast to all. */
async function fanOut(sockets: SignalingConnection[]): Promise<Latency> {
  const times: number[] = [];
  const moderator = sockets[0]!;
  for (let i = 0; i < BROADCASTS; i++) {
    const started = await broadcast(
      sockets,
      'started',
      () => moderator.send('timer', { action: 'start', kind: 'countdown', duration: 300, title: 'Bench', enable_ready_check: false }),
      times,
    );
    const timerId = (started.payload as { timer_id: string }).timer_id;
    await broadcast(sockets, 'stopped', () => moderator.send('timer', { action: 'stop', timer_id: timerId }), times);
  }
  return percentiles(times);
}

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
  signaling_caps: { tickets_per_user: 1000, sockets_per_user: 1000 },
});
const fast = await receiver(0);
const fast2 = await receiver(0);
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
  await call('POST', '/webhook_subscriptions', { url: fast.url, event_types: EVENT_TYPES });
  const drained = async () => {
    for (;;) {
      const { pending } = await db
        .selectFrom('webhook_deliveries')
        .innerJoin('webhook_subscriptions', 'webhook_subscriptions.id', 'webhook_deliveries.subscription_id')
        .select((eb) => eb.fn.countAll<string>().as('pending'))
        .where('delivered_at', 'is', null)
        .where('url', '!=', slow.url)
        .executeTakeFirstOrThrow();
      if (Number(pending) === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const room = (await call('POST', '/rooms', { enable_sip: false, waiting_room: false })).json;
  const sockets: SignalingConnection[] = [];
  for (let i = 0; i < PARTICIPANTS; i++) {
    const { ticket } = (await call('POST', `/rooms/${room.id}/start`, {})).json;
    const socket = await connectSignaling({ url: app.url, ticket, WebSocket });
    await socket.join(`P${i}`, { timeoutMs: 30_000 });
    sockets.push(socket);
  }
  await drained();

  const create = () => call('POST', '/events', { title: 'Latency', description: '', is_time_independent: true });
  const measure = async () => {
    const http = await measureSequential(300, create);
    await drained();
    const signaling = await fanOut(sockets);
    await drained();
    return { http, signaling };
  };
  // a first round warms the JIT and the statements, so that no measured case pays for it
  await measure();
  const oneFast = await measure();
  // a second subscription doubles the delivery work; a second fast one tells that work from the slowness
  const second = (await call('POST', '/webhook_subscriptions', { url: fast2.url, event_types: EVENT_TYPES })).json;
  const twoFast = await measure();
  await call('DELETE', `/webhook_subscriptions/${second.id}`);
  await call('POST', '/webhook_subscriptions', { url: slow.url, event_types: EVENT_TYPES });
  const withSlow = await measure();
  const ms = (v: number) => `${v.toFixed(2).padStart(6)} ms`;
  const row = (label: string, a: Latency, b: Latency, c: Latency) =>
    console.log(
      `${label.padEnd(38)} p50 ${ms(a.p50)} / ${ms(b.p50)} / ${ms(c.p50)} (x${(c.p50 / b.p50).toFixed(2)})` +
        `   p99 ${ms(a.p99)} / ${ms(b.p99)} / ${ms(c.p99)} (x${(c.p99 / b.p99).toFixed(2)})`,
    );
  console.log('one fast receiver / a second fast one beside it / a receiver answering after 5 s instead (ratio slow / second fast)');
  row('POST /v1/events', oneFast.http, twoFast.http, withSlow.http);
  row(`timer broadcast to ${PARTICIPANTS} participants`, oneFast.signaling, twoFast.signaling, withSlow.signaling);
  console.log(`\nthe slow receiver got ${slow.count()} requests meanwhile (one attempt at a time per subscription, 5 s each)`);
  await Promise.all(sockets.map((socket) => socket.close()));
} finally {
  await app.close();
  await fast.close();
  await fast2.close();
  await slow.close();
}
