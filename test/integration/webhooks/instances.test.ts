/**
 * Webhooks across instances (issue 20): two instances over one database send each delivery once;
 * and an instance SIGKILLed in the middle of an attempt (its receiver hangs) loses nothing: once
 * its lease ends, another instance sends the same message (same `webhook-id`) again, at least once.
 * The kill needs instances in separate processes over a database server: skipped without
 * DATABASE_URL.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { call, childEnv, freshServerDatabase, killChildren, loginTo, startChild, type ChildServer } from '../../support/child-server.js';
import { createEvent } from '../../support/events.js';
import { startTestIssuer } from '../../support/oidc-issuer.js';
import { useTestApp } from '../../support/test-app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

const databaseUrl = process.env.DATABASE_URL || undefined;
const WEBHOOKS = { allow_http: true, allow_private: true, poll_interval_ms: 20, retry_base_ms: 50, timeout_ms: 2000 };

let receiver: WebhookReceiver;
beforeEach(async () => {
  receiver = await startWebhookReceiver();
});
afterEach(() => receiver.close());

describe('two instances', () => {
  const app = useTestApp({ webhooks: WEBHOOKS });

  it('send each delivery once', async () => {
    const second = await app.withConfig({ webhooks: WEBHOOKS });
    try {
      const ada = await app.login('ada');
      const res = await fetch(`${app.url}/v1/webhook_subscriptions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ada.accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: receiver.url, event_types: ['event.created'] }),
      });
      expect(res.status).toBe(201);
      const events = [];
      for (let i = 0; i < 12; i++) events.push(await createEvent(i % 2 === 0 ? app : second, ada));
      await receiver.waitFor(12);
      await sleep(500); // time for a second copy to arrive, were one sent
      const ids = receiver.received.map((r) => r.headers['webhook-id']);
      expect(ids).toHaveLength(12);
      expect(new Set(ids).size).toBe(12);
      expect(new Set(receiver.received.map((r) => r.json.data.event_id))).toEqual(new Set(events.map((e) => e.id)));
    } finally {
      await second.close();
    }
  });
});

describe.skipIf(!databaseUrl)('an instance killed while sending', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    await killChildren();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('leaves the delivery to another instance once its lease ends: at least once, same webhook-id', { timeout: 180_000 }, async () => {
    const issuer = await startTestIssuer({ clientId: 'convene' });
    const database = await freshServerDatabase(databaseUrl!);
    const start = () => {
      const cwd = mkdtempSync(join(tmpdir(), 'convene-webhooks-'));
      dirs.push(cwd);
      writeFileSync(
        join(cwd, 'convene.toml'),
        `[webhooks]\n${Object.entries(WEBHOOKS)
          .map(([k, v]) => `${k} = ${v}`)
          .join('\n')}\n`,
      );
      return startChild(cwd, childEnv(cwd, issuer, { DATABASE_URL: database.url, CONVENE_CONFIG: join(cwd, 'convene.toml') }));
    };
    try {
      receiver.answer = (_, index) => (index === 0 ? 'hang' : 200);
      const a: ChildServer = await start();
      const token = await loginTo(a, issuer, 'owner');
      const subscription = await call(a, 'POST', '/v1/webhook_subscriptions', { token, body: { url: receiver.url, event_types: ['event.created'] } });
      expect(subscription.status).toBe(201);
      const event = await call(a, 'POST', '/v1/events', { token, body: { title: 'Crash', description: '', is_time_independent: true } });
      expect(event.status).toBe(201);
      await receiver.waitFor(1, 30_000);
      a.kill('SIGKILL'); // while its attempt hangs: the delivery is leased, not delivered
      await a.exited;

      const b = await start();
      const [first, second] = await receiver.waitFor(2, 60_000);
      expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
      expect(second!.json.data.event_id).toBe(event.body.id);
      // the receiver has the request before the worker records its answer
      const deliveries = () => call(b, 'GET', `/v1/webhook_subscriptions/${subscription.body.id}/deliveries`, { token });
      let log = await deliveries();
      for (let i = 0; i < 200 && log.body[0]?.status !== 'delivered'; i++) {
        await sleep(25);
        log = await deliveries();
      }
      expect(log.body).toMatchObject([{ status: 'delivered', attempts: 1, last_status_code: 200 }]);
    } finally {
      await killChildren();
      await database.drop();
      await issuer.close();
    }
  });
});
