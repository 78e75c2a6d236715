/**
 * The webhook events of signaling while PostgreSQL is stopped (issue 20): an event decided then
 * waits in memory and reaches the receiver once the server is back, once; beyond the queue's
 * limit the oldest waiting event is dropped (logged and counted); at shutdown the waiting events
 * get a time limit, then are dropped. The test's own server (test/support/private-postgres.ts),
 * stopped for real: it runs in both CI passes, and is skipped without the PostgreSQL binaries.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { connectSignaling } from '../../packages/client/src/index.js';
import { loadConfig } from '../../src/config/load.js';
import { createConvene, type Convene } from '../../src/server.js';
import { createWebhookOutbox } from '../../src/domain/webhooks/outbox.js';
import { createSignalingWebhooks } from '../../src/signaling/webhooks.js';
import { checkWebhook } from '../support/contract.js';
import { startTestIssuer, type TestIssuer } from '../support/oidc-issuer.js';
import { privatePostgresUnavailable, startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const unavailable = privatePostgresUnavailable();
if (unavailable) console.warn(`test/faults/signaling-webhooks.test.ts skipped: ${unavailable}`);

let postgres: PrivatePostgres | undefined;
let issuer: TestIssuer | undefined;
let convene: Convene | undefined;
let receiver: WebhookReceiver | undefined;
let baseUrl = '';

beforeAll(async () => {
  if (unavailable) return;
  postgres = await startPrivatePostgres();
  issuer = await startTestIssuer({ clientId: 'convene' });
  receiver = await startWebhookReceiver();
  const config = loadConfig({
    file: false,
    env: {},
    overrides: {
      database: { url: postgres.url, query_timeout_ms: 1_000 },
      oidc: { issuer: issuer.issuer, client_id: 'convene' },
      dev: { identity_provider: false },
      webhooks: { allow_http: true, allow_private: true, poll_interval_ms: 20, retry_base_ms: 50 },
    },
  });
  convene = await createConvene(config, { logger: pino({ level: 'silent' }) });
  baseUrl = `http://127.0.0.1:${(await convene.listen(0, '127.0.0.1')).port}`;
}, 60_000);

afterAll(async () => {
  try {
    await convene?.close();
    await receiver?.close();
    await issuer?.close();
  } finally {
    await postgres?.destroy();
  }
}, 60_000);

async function api(method: string, path: string, token: string, body?: unknown): Promise<any> {
  const res = await fetch(new URL(path, baseUrl), {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
  return text ? JSON.parse(text) : undefined;
}

async function owner(): Promise<{ id: string; token: string }> {
  const idToken = await issuer!.idToken({ sub: 'sub-owner', email: 'owner@example.test', given_name: 'Owner', family_name: 'Tester' });
  await fetch(new URL('/v1/auth/login', baseUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id_token: idToken }),
  });
  const token = await issuer!.accessToken({ sub: 'sub-owner' });
  return { id: (await api('GET', '/v1/users/me', token)).id, token };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The dedupe keys in the outbox among `keys`. */
async function stored(keys: string[]): Promise<string[]> {
  const rows = await convene!.database.db.selectFrom('webhook_messages').select('dedupe_key').where('dedupe_key', 'in', keys).execute();
  return rows.map((row) => row.dedupe_key!).sort();
}

describe.skipIf(unavailable !== undefined)('webhook events of signaling while PostgreSQL is stopped', () => {
  let ownerId = '';

  it('a leave while the database is down reaches the receiver once it is back, once', async () => {
    const me = await owner();
    ownerId = me.id;
    await api('POST', '/v1/webhook_subscriptions', me.token, { url: receiver!.url });
    const room = await api('POST', '/v1/rooms', me.token, { enable_sip: false, waiting_room: false });
    const { ticket } = await api('POST', `/v1/rooms/${room.id}/start`, me.token, {});
    const socket = await connectSignaling({ url: baseUrl, ticket, WebSocket, validate: true });
    expect((await socket.join('Owner', { timeoutMs: 5_000 })).result).toBe('join_success');
    await receiver!.waitFor(2);

    await postgres!.stop('fast');
    await socket.close();
    // several failed inserts (50 ms, 100 ms, … apart; the query timeout is 1 s) and nothing sent
    await sleep(1_500);
    expect(receiver!.received).toHaveLength(2);
    await postgres!.start();

    const got = await receiver!.waitFor(4, 40_000); // the queue retries at 200 ms doubling up to 10 s; a slow restart under load
    expect(got.map((r) => r.json.type)).toEqual(['room.started', 'participant.joined', 'participant.left', 'room.ended']);
    for (const delivery of got) checkWebhook(delivery.headers, delivery.body);
    await sleep(300);
    expect(receiver!.received).toHaveLength(4);
    const metrics = await (await fetch(new URL('/metrics', baseUrl))).text();
    expect(metrics).toMatch(/^convene_webhook_events_dropped_total 0$/m);
  }, 60_000);

  it('a delivery answered while the database is down is recorded once it is back: sent once, not counted as failed', async () => {
    const me = await owner();
    const first = receiver!.received.length;
    let answer: (status: number) => void = () => undefined;
    receiver!.answer = (_request, index) => (index === first ? new Promise<number>((resolve) => (answer = resolve)) : 200);
    await api('POST', '/v1/events', me.token, { title: 'Answered in the outage', description: '', is_time_independent: true });
    const [delivery] = (await receiver!.waitFor(first + 1)).slice(first);

    await postgres!.stop('fast');
    answer(200);
    await sleep(1_500); // the worker's writes of the result fail meanwhile (the query timeout is 1 s)
    await postgres!.start();

    const recorded = () =>
      convene!.database.db
        .selectFrom('webhook_deliveries')
        .select(['attempts', 'delivered_at', 'last_status_code', 'last_error'])
        .where('message_id', '=', delivery!.json.id)
        .executeTakeFirstOrThrow();
    for (let waited = 0; (await recorded()).delivered_at === null; waited += 50) {
      if (waited > 15_000) throw new Error(`the delivery was not recorded: ${JSON.stringify(await recorded())}`);
      await sleep(50);
    }
    expect(await recorded()).toMatchObject({ attempts: 1, last_status_code: 200, last_error: null });
    expect(receiver!.received.filter((request) => request.json.id === delivery!.json.id)).toHaveLength(1);
    receiver!.answer = () => 200;
  }, 60_000);

  it('beyond the limit drops the oldest waiting event, logged and counted; the others arrive', async () => {
    const logged: { level: number; msg: string }[] = [];
    const logger = pino({ level: 'warn' }, new Writable({ write: (line, _enc, done) => done(void logged.push(JSON.parse(String(line)))) }));
    let drops = 0;
    const queue = createSignalingWebhooks(createWebhookOutbox(convene!.database.db), logger, {
      maxQueued: 2,
      retryBaseMs: 20,
      retryMaxMs: 100,
      onDrop: () => drops++,
    });
    const room = { roomId: '00000000-0000-4000-8000-00000000a001', ownerId };
    const keys = ['limit-1', 'limit-2', 'limit-3'];

    await postgres!.stop('fast');
    for (const key of keys) queue.emit(room, 'room.started', { room_id: room.roomId }, key);
    expect([queue.pending(), drops]).toEqual([2, 1]);
    expect(logged.filter((line) => line.msg.includes('dropped: more than 2 waiting'))).toHaveLength(1);
    await sleep(300);
    expect(queue.pending()).toBe(2);
    await postgres!.start();

    for (let waited = 0; queue.pending() > 0; waited += 50) {
      if (waited > 15_000) throw new Error('the waiting events did not reach the outbox');
      await sleep(50);
    }
    expect(await stored(keys)).toEqual(['limit-2', 'limit-3']);
    expect(drops).toBe(1);
    await queue.close(1_000);
  }, 60_000);

  it('at shutdown the waiting events get the time limit, then are dropped', async () => {
    let drops = 0;
    const queue = createSignalingWebhooks(createWebhookOutbox(convene!.database.db), pino({ level: 'silent' }), {
      maxQueued: 10,
      retryBaseMs: 20,
      retryMaxMs: 100,
      onDrop: () => drops++,
    });
    const room = { roomId: '00000000-0000-4000-8000-00000000a002', ownerId };

    await postgres!.stop('fast');
    queue.emit(room, 'room.started', { room_id: room.roomId }, 'shutdown-1');
    queue.emit(room, 'room.ended', { room_id: room.roomId }, 'shutdown-2');
    const started = performance.now();
    await queue.close(400);
    const took = performance.now() - started;
    expect(took).toBeGreaterThanOrEqual(390);
    expect(took).toBeLessThan(1_000);
    expect([queue.pending(), drops]).toEqual([0, 2]);
    await postgres!.start();
    await sleep(1_500); // an insert under way when closed would have landed by now (the query timeout is 1 s)
    expect(await stored(['shutdown-1', 'shutdown-2'])).toEqual([]);
  }, 60_000);

  it('at shutdown with the database up, the waiting events are flushed before close returns', async () => {
    let drops = 0;
    const queue = createSignalingWebhooks(createWebhookOutbox(convene!.database.db), pino({ level: 'silent' }), {
      maxQueued: 10,
      retryBaseMs: 20,
      retryMaxMs: 100,
      onDrop: () => drops++,
    });
    const room = { roomId: '00000000-0000-4000-8000-00000000a003', ownerId };
    queue.emit(room, 'room.started', { room_id: room.roomId }, 'flush-1');
    queue.emit(room, 'room.ended', { room_id: room.roomId }, 'flush-2');
    await queue.close(5_000);
    expect(drops).toBe(0);
    expect(await stored(['flush-1', 'flush-2'])).toEqual(['flush-1', 'flush-2']);
  }, 30_000);
});
