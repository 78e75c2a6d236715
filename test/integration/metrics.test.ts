/**
 * The instance's metrics at `/metrics`: each one appears, with its help text, and moves with what it
 * counts — sockets, joined participants and their rooms, the signaling bus's timings, database
 * errors and its pool, the mail outbox and mail failures, Redis errors — all through real
 * components (an errored query, an SMTP server and a Redis that refuse on a closed loopback port).
 */
import { createServer, type Socket } from 'node:net';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { dbOf } from '../support/test-app.js';
import type { TestApp } from '../support/test-app.js';
import { redisUrl } from '../support/signaling.js';
import { connect, startTicket } from '../support/signaling-client.js';
import { useSignalingRooms } from '../support/signaling-rooms.js';

const { app, room, open, join } = useSignalingRooms();

/** A loopback port nothing listens on: every connection is refused at once. */
const CLOSED = '127.0.0.1:1';

async function scrape(instance: TestApp = app): Promise<string> {
  const answer = await instance.request('GET', '/metrics');
  expect(answer.status).toBe(200);
  return answer.text_;
}

/** The value of one sample (`name` with exactly these labels), or undefined when there is none. */
function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

async function read(name: string, instance: TestApp = app): Promise<number> {
  const value = sample(await scrape(instance), name);
  if (value === undefined) throw new Error(`no sample of ${name}`);
  return value;
}

/** Polls until `name` reads `expected` (departures and deliveries finish after the client's side). */
async function eventually(name: string, expected: (value: number) => boolean, instance: TestApp = app, ms = 3_000): Promise<number> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read(name, instance);
    if (expected(value)) return value;
    if (Date.now() > deadline) throw new Error(`${name} is still ${value} after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const pendingMail = (subject: string) =>
  dbOf(app)
    .insertInto('email_outbox')
    .values({ kind: 'updated', event_id: null, recipients: ['ada@example.test'], subject, text: 'text', ics: null })
    .returning('id')
    .executeTakeFirstOrThrow();

describe('/metrics', () => {
  it('names every metric with its help text and type', async () => {
    const text = await scrape();
    for (const [name, type] of [
      ['convene_http_requests_total', 'counter'],
      ['convene_http_request_duration_seconds', 'histogram'],
      ['convene_signaling_sockets_open', 'gauge'],
      ['convene_signaling_rooms_active', 'gauge'],
      ['convene_signaling_participants', 'gauge'],
      ['convene_signaling_bus_publish_seconds', 'histogram'],
      ['convene_signaling_bus_delivery_seconds', 'histogram'],
      ['convene_database_pool_connections', 'gauge'],
      ['convene_database_pool_idle_connections', 'gauge'],
      ['convene_database_pool_waiting_queries', 'gauge'],
      ['convene_database_errors_total', 'counter'],
      ['convene_redis_errors_total', 'counter'],
      ['convene_mail_outbox_pending', 'gauge'],
      ['convene_mail_failures_total', 'counter'],
      ['convene_webhook_events_dropped_total', 'counter'],
    ]) {
      expect(text, name).toMatch(new RegExp(`^# HELP ${name} \\S`, 'm'));
      expect(text, name).toContain(`# TYPE ${name} ${type}\n`);
    }
  });

  it('counts open sockets, joined participants and the rooms they are in, and lets them go on leaving', async () => {
    await eventually('convene_signaling_sockets_open', (v) => v === 0);
    const { moderator, guest } = await room();
    const bob = await open(guest);
    expect(await read('convene_signaling_sockets_open')).toBe(1);
    // connected, not joined: no participant yet
    expect(await read('convene_signaling_participants')).toBe(0);
    expect(await read('convene_signaling_rooms_active')).toBe(0);

    const alice = await join(moderator, 'Alice');
    expect(await read('convene_signaling_sockets_open')).toBe(2);
    expect(await read('convene_signaling_participants')).toBe(1);
    expect(await read('convene_signaling_rooms_active')).toBe(1);

    bob.command('control', 'join', { display_name: 'Bob' });
    await bob.next('control', 'join_success');
    expect(await read('convene_signaling_participants')).toBe(2);
    expect(await read('convene_signaling_rooms_active')).toBe(1);

    const other = await room();
    const carol = await join(other.moderator, 'Carol');
    expect(await read('convene_signaling_rooms_active')).toBe(2);
    expect(await read('convene_signaling_participants')).toBe(3);

    await Promise.all([alice.close(), bob.close(), carol.close()]);
    await eventually('convene_signaling_sockets_open', (v) => v === 0);
    expect(await read('convene_signaling_participants')).toBe(0);
    expect(await read('convene_signaling_rooms_active')).toBe(0);
  });

  it('times the bus: a room message counts one publish here and one delivery here', async () => {
    const { moderator, guest } = await room();
    const alice = await join(moderator, 'Alice');
    const published = await read('convene_signaling_bus_publish_seconds_count');
    const delivered = await read('convene_signaling_bus_delivery_seconds_count');

    const bob = await join(guest, 'Bob');
    await alice.next('control', 'joined');
    expect(bob.joinSuccess.participants).toHaveLength(1);
    const publishedNow = await read('convene_signaling_bus_publish_seconds_count');
    expect(publishedNow).toBeGreaterThan(published);
    // every message published here has one subscriber here (the room's hub): each is delivered once
    await eventually('convene_signaling_bus_delivery_seconds_count', (v) => v - delivered >= publishedNow - published);
    const text = await scrape();
    expect(sample(text, 'convene_signaling_bus_delivery_seconds_sum')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'convene_signaling_bus_delivery_seconds_bucket', 'le="1"')).toBeGreaterThan(0);
  });

  // the in-process bus has no other instance to hear from
  it.skipIf(!redisUrl)('times a delivery from another instance (with Redis): the publication time travels in the message', async () => {
    const second = await app.withConfig({});
    try {
      const { moderator, guest } = await room();
      const alice = await join(moderator, 'Alice', second);
      const published = await read('convene_signaling_bus_publish_seconds_count', second);
      const delivered = await read('convene_signaling_bus_delivery_seconds_count', second);
      await join(guest, 'Bob'); // on the file's instance: its `joined` is published there
      await alice.next('control', 'joined');
      expect(await read('convene_signaling_bus_delivery_seconds_count', second)).toBeGreaterThan(delivered);
      expect(await read('convene_signaling_bus_publish_seconds_count', second)).toBe(published);
      await alice.close();
    } finally {
      await second.close();
    }
  });

  it('counts a query the database refused, and shows the pool', async () => {
    const before = await read('convene_database_errors_total');
    await expect(sql`select * from no_such_table`.execute(dbOf(app))).rejects.toThrow(/no_such_table/);
    expect(await read('convene_database_errors_total')).toBe(before + 1);
    // a good query counts nothing
    await sql`select 1`.execute(dbOf(app));
    expect(await read('convene_database_errors_total')).toBe(before + 1);

    const text = await scrape();
    expect(sample(text, 'convene_database_pool_connections')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'convene_database_pool_idle_connections')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'convene_database_pool_waiting_queries')).toBe(0);
  });

  it('counts the mails not yet sent in the outbox', async () => {
    expect(await read('convene_mail_outbox_pending')).toBe(0);
    const first = await pendingMail('one');
    await pendingMail('two');
    expect(await read('convene_mail_outbox_pending')).toBe(2);
    await dbOf(app).updateTable('email_outbox').set({ sent_at: new Date() }).where('id', '=', first.id).execute();
    expect(await read('convene_mail_outbox_pending')).toBe(1);
  });

  it('counts a mail the SMTP server did not take', async () => {
    const mailing = await app.withConfig({ smtp: { url: `smtp://${CLOSED}` } });
    try {
      expect(await read('convene_mail_failures_total', mailing)).toBe(0);
      await pendingMail('refused');
      expect(await mailing.convene.mailWorker!.drain()).toBe(0);
      expect(await read('convene_mail_failures_total', mailing)).toBe(1);
      expect(await read('convene_mail_outbox_pending', mailing)).toBe(1); // kept for a later attempt
    } finally {
      await mailing.close();
    }
  });

  it('counts the errors of a Redis connection that is refused', async () => {
    const refused = await app.withConfig({ redis: { url: `redis://${CLOSED}` } });
    try {
      await eventually('convene_redis_errors_total', (v) => v > 0, refused);
      // the instance of the test file, on its own Redis or none, counts none
      expect(await read('convene_redis_errors_total')).toBe(0);
    } finally {
      await refused.close();
    }
  });
});

// embedded PGlite is one session: a transaction holding it keeps every other query waiting, as a
// database that stopped answering would (on a server the pool has other connections)
describe.skipIf(process.env.DATABASE_URL)('a database that does not answer in time (embedded: its one session held)', () => {
  it('the outbox gauge reads NaN after 1 s and /ready answers 503 timeout after 2 s', async () => {
    await dbOf(app)
      .transaction()
      .execute(async () => {
        const started = performance.now();
        expect(await read('convene_mail_outbox_pending')).toBeNaN();
        expect(performance.now() - started).toBeLessThan(1_900);
        const answer = await app.request('GET', '/ready');
        expect(answer.status).toBe(503);
        expect(JSON.parse(answer.text_).errors).toEqual([{ field: 'database', code: 'timeout', message: 'the database did not answer within 2000 ms' }]);
      });
    expect(await read('convene_mail_outbox_pending')).toBe(0);
  });
});

describe('/ready', () => {
  it(`answers 200 while the database${redisUrl ? ' and Redis answer' : ' answers (no Redis configured)'}`, async () => {
    const answer = await app.request('GET', '/ready');
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text_)).toEqual({ status: 'ready', database: 'up', redis: redisUrl ? 'up' : 'not_configured', media: 'not_configured' });
  });

  it('answers 503 with the error body naming Redis when Redis does not answer', async () => {
    const refused = await app.withConfig({ redis: { url: `redis://${CLOSED}` } });
    try {
      const answer = await refused.request('GET', '/ready');
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.text_)).toEqual({
        code: 'service_unavailable',
        message: 'Not ready: redis not answering',
        documentation_url: '/docs#error-service_unavailable',
        status: '503',
        errors: [{ field: 'redis', code: 'unavailable', message: 'Redis failed' }],
      });
      // liveness is not readiness: the process and its database are fine
      expect((await refused.request('GET', '/health')).status).toBe(200);
    } finally {
      await refused.close();
    }
  });

  it('answers 503 timeout when Redis takes the connection and answers nothing', async () => {
    const held: Socket[] = [];
    const silent = createServer((socket) => held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const frozen = await app.withConfig({ redis: { url: `redis://127.0.0.1:${(silent.address() as { port: number }).port}` } });
    try {
      const answer = await frozen.request('GET', '/ready');
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.text_).errors).toEqual([{ field: 'redis', code: 'timeout', message: 'Redis did not answer within 2000 ms' }]);
    } finally {
      for (const socket of held) socket.destroy();
      await frozen.close();
      silent.close();
    }
  });

  it('answers 503 with the error body once shutdown has begun, while a socket is still closing', async () => {
    const leaving = await app.withConfig({});
    const { guest } = await room();
    const client = await connect(leaving, (await startTicket(leaving, guest)).ticket);
    // a client that reads nothing does not answer the close frame: the shutdown waits for it
    client.ws.pause();
    const closing = leaving.close();
    try {
      const answer = await fetch(`${leaving.url}/ready`);
      expect(answer.status).toBe(503);
      expect(await answer.json()).toMatchObject({ code: 'service_unavailable', message: 'The server is shutting down', status: '503' });
    } finally {
      client.ws.resume();
      await closing;
    }
  });
});
