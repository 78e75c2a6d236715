/**
 * The subscription API (issue 20): SSRF refusals before any connection (without `allow_private`
 * and `allow_http`, the defaults), the refusal again at delivery time on the resolved address, the
 * limits at their edges, and access: another user's subscription is 404.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createEvent, send } from '../../support/events.js';
import { dbOf, startTestApp, useTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

// a public address literal: nothing to resolve; the event type is never caused here, so nothing is sent
const PUBLIC = 'https://192.0.2.10/hooks';
const QUIET = { event_types: ['timer.started'] };

const app = useTestApp({ webhooks: { max_subscriptions_per_user: 2 } });
let ada: TestUser;
let bob: TestUser;
beforeEach(async () => {
  [ada, bob] = await Promise.all([app.login('ada'), app.login('bob')]);
});

const create = (user: TestUser, body: Record<string, unknown>) =>
  send(app, 'POST', '/webhook_subscriptions', { token: user.accessToken, body: { ...QUIET, ...body } });

describe('creating a subscription', () => {
  it('answers 201 with a Standard Webhooks secret, shown once', async () => {
    const res = await create(ada, { url: PUBLIC, description: 'analytics' });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ url: PUBLIC, event_types: ['timer.started'], description: 'analytics', status: 'active', consecutive_failures: 0 });
    expect(res.json.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const read = await send(app, 'GET', `/webhook_subscriptions/${res.json.id}`, { token: ada.accessToken });
    expect(read.json.secret).toBeUndefined();
    const all = await send(app, 'POST', '/webhook_subscriptions', { token: ada.accessToken, body: { url: PUBLIC } });
    expect(all.json.event_types).toHaveLength(12);
  });

  it.each([
    ['http://192.0.2.10/hooks', 'only https'],
    ['https://10.0.0.1/hooks', 'private'],
    ['https://169.254.169.254/latest/meta-data/', 'link-local'],
    ['https://127.0.0.1:8443/', 'loopback'],
    ['https://[::1]/hooks', 'loopback'],
    ['https://[::ffff:10.1.2.3]/hooks', 'private'],
    ['https://[fd00::1]/hooks', 'private'],
    ['https://100.64.0.1/hooks', 'private'],
    ['https://localhost/hooks', 'loopback'],
    ['https://api.localhost/hooks', 'loopback'],
    ['https://user:pw@192.0.2.10/hooks', 'credentials'],
  ])('refuses %s with 400 webhook_url_refused, before connecting', async (url, reason) => {
    const res = await create(ada, { url });
    expect(res.status).toBe(400);
    expect(res.json.code).toBe('webhook_url_refused');
    expect(res.json.message).toContain(reason);
    expect(await dbOf(app).selectFrom('webhook_subscriptions').select('id').execute()).toHaveLength(0);
  });

  it('takes a URL of 2048 characters, not 2049', async () => {
    const base = `${PUBLIC}/`;
    expect((await create(ada, { url: base + 'a'.repeat(2048 - base.length) })).status).toBe(201);
    const long = await create(ada, { url: base + 'a'.repeat(2049 - base.length) });
    expect(long.status).toBe(400);
    expect(long.json.code).toBe('validation_failed');
  });

  it('refuses an unknown event type, an empty or repeated list, and a description over 255 characters', async () => {
    for (const body of [
      { event_types: ['room.exploded'] },
      { event_types: [] },
      { event_types: ['room.started', 'room.started'] },
      { description: 'd'.repeat(256) },
    ]) {
      const res = await send(app, 'POST', '/webhook_subscriptions', { token: ada.accessToken, body: { url: PUBLIC, ...body } });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect((await create(ada, { url: PUBLIC, description: 'd'.repeat(255) })).status).toBe(201);
  });

  it('holds max_subscriptions_per_user per user: the next one is 409', async () => {
    expect((await create(ada, { url: PUBLIC })).status).toBe(201);
    expect((await create(ada, { url: PUBLIC })).status).toBe(201);
    const over = await create(ada, { url: PUBLIC });
    expect(over.status).toBe(409);
    expect(over.json.code).toBe('webhook_subscription_limit');
    expect((await create(bob, { url: PUBLIC })).status).toBe(201); // another user's count is their own
  });
});

describe('access', () => {
  it('answers 404 to another user for each operation on a subscription, and lists only the caller’s', async () => {
    const { id } = (await create(ada, { url: PUBLIC })).json;
    for (const [method, path] of [
      ['GET', `/webhook_subscriptions/${id}`],
      ['POST', `/webhook_subscriptions/${id}/resume`],
      ['GET', `/webhook_subscriptions/${id}/deliveries`],
      ['DELETE', `/webhook_subscriptions/${id}`],
    ] as const) {
      const res = await send(app, method, path, { token: bob.accessToken });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.json.code).toBe('not_found');
    }
    expect((await send(app, 'GET', '/webhook_subscriptions', { token: bob.accessToken })).json).toEqual([]);
    expect((await send(app, 'GET', '/webhook_subscriptions', { token: ada.accessToken })).json).toHaveLength(1);
    expect((await send(app, 'DELETE', `/webhook_subscriptions/${id}`, { token: ada.accessToken })).status).toBe(204);
    expect((await send(app, 'GET', `/webhook_subscriptions/${id}`, { token: ada.accessToken })).status).toBe(404);
  });
});

describe('at delivery time', () => {
  let strict: TestApp;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    // http allowed (a loopback receiver), private addresses not
    strict = await startTestApp({ webhooks: { allow_http: true, poll_interval_ms: 20, retry_base_ms: 50 } });
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await strict.close();
  });

  it('does not connect when the host resolves to a loopback address (as after DNS rebinding)', async () => {
    const carol = await strict.login('carol');
    // as if `localhost` had resolved to a public address when subscribing
    const url = receiver.url.replace('127.0.0.1', 'localhost');
    const subscription = await dbOf(strict)
      .insertInto('webhook_subscriptions')
      .values({ id: crypto.randomUUID(), owner: carol.id, url, secret: 'whsec_c2VjcmV0LXNlY3JldA==', event_types: ['event.created'] })
      .returning('id')
      .executeTakeFirstOrThrow();
    await createEvent(strict, carol);
    let log: { attempts: number; last_error?: string; status: string }[] = [];
    for (let i = 0; i < 200 && (log[0]?.attempts ?? 0) < 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      log = (await send(strict, 'GET', `/webhook_subscriptions/${subscription.id}/deliveries`, { token: carol.accessToken })).json;
    }
    expect(log[0]).toMatchObject({ status: 'pending' });
    expect(log[0]!.attempts).toBeGreaterThanOrEqual(2);
    expect(log[0]!.last_error).toContain('internal address 127.0.0.1');
    expect(receiver.received).toHaveLength(0);
  });
});
