/**
 * Webhooks end to end (issue 20): a real receiver on loopback gets the events of a user's meetings
 * and invitations, signed (checked the way a receiver checks them), in order per meeting, again
 * after failed attempts, and not at all once the subscription is paused, until it is resumed. A
 * receiver that hangs neither slows a request nor holds back another subscription's deliveries.
 * Loopback targets need `allow_private` and `allow_http`, switched on here.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkWebhook } from '../../support/contract.js';
import { createEvent, send, timedBody } from '../../support/events.js';
import { startTestApp, useTestApp, type TestUser } from '../../support/test-app.js';
import { startWebhookReceiver, verify, type WebhookReceiver } from '../../support/webhook-receiver.js';

const app = useTestApp({
  webhooks: { allow_http: true, allow_private: true, poll_interval_ms: 20, retry_base_ms: 50, timeout_ms: 1000, pause_after_failures: 3, concurrency: 4 },
});
let ada: TestUser;
let bob: TestUser;
let receiver: WebhookReceiver;
beforeEach(async () => {
  [ada, bob] = await Promise.all([app.login('ada'), app.login('bob')]);
  receiver = await startWebhookReceiver();
});
afterEach(() => receiver.close());

async function subscribe(user: TestUser, body: Record<string, unknown> = {}, url = receiver.url) {
  const res = await send(app, 'POST', '/webhook_subscriptions', { token: user.accessToken, body: { url, ...body } });
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  return res.json as { id: string; secret: string; status: string };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('delivery', () => {
  it('signs every delivery (Standard Webhooks) with a body and headers as the contract declares', async () => {
    const { secret } = await subscribe(ada);
    const event = await createEvent(app, ada, timedBody({ password: 'room-secret-pw' }));
    const [got] = await receiver.waitFor(1);
    checkWebhook(got!.headers, got!.body);
    expect(verify(secret, got!.headers, got!.body)).toBe(true);
    expect(
      verify(
        secret.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')),
        got!.headers,
        got!.body,
      ),
    ).toBe(false);
    // a replayed delivery is refused by its timestamp, a tampered body by its signature
    expect(verify(secret, { ...got!.headers, 'webhook-timestamp': String(Math.floor(Date.now() / 1000) - 600) }, got!.body)).toBe(false);
    expect(verify(secret, got!.headers, got!.body.replace('Weekly', 'Daily'))).toBe(false);
    expect(got!.json).toMatchObject({ type: 'event.created', data: { event_id: event.id, room_id: event.room.id, title: 'Weekly planning' } });
    expect(got!.headers['webhook-id']).toBe(got!.json.id);
    expect(got!.body).not.toContain('room-secret-pw');
  });

  it('carries no invite code and no call-in pin', async () => {
    await subscribe(ada);
    const event = await createEvent(app, ada);
    const invite = await send(app, 'POST', `/rooms/${event.room.id}/invites`, { token: ada.accessToken, body: {} });
    const sip = await send(app, 'GET', `/rooms/${event.room.id}/sip`, { token: ada.accessToken });
    expect(sip.status).toBe(200);
    await send(app, 'PATCH', `/events/${event.id}`, { token: ada.accessToken, body: { title: 'Renamed' } });
    const got = await receiver.waitFor(2);
    for (const delivery of got) {
      expect(delivery.body).not.toContain(invite.json.invite_code);
      expect(delivery.body).not.toContain(sip.json.password);
    }
  });

  it('delivers a meeting’s events in order, also when an attempt fails in between', async () => {
    const { id } = await subscribe(ada);
    receiver.answer = (_, index) => (index === 1 ? 500 : 200); // the first `updated` fails once
    const event = await createEvent(app, ada);
    for (const title of ['One', 'Two']) {
      expect((await send(app, 'PATCH', `/events/${event.id}`, { token: ada.accessToken, body: { title } })).status).toBe(200);
    }
    expect((await send(app, 'DELETE', `/events/${event.id}`, { token: ada.accessToken })).status).toBe(204);
    const got = await receiver.waitFor(5);
    const delivered = got.filter((_, index) => index !== 1);
    expect(delivered.map((r) => r.json.type)).toEqual(['event.created', 'event.updated', 'event.updated', 'event.cancelled']);
    expect(delivered.map((r) => r.json.data.title)).toEqual(['Weekly planning', 'One', 'Two', 'Two']);
    // the retry is the same message (same webhook-id), signed anew
    expect(got[1]!.headers['webhook-id']).toBe(got[2]!.headers['webhook-id']);

    await waitForDelivered(id, 4); // the receiver has the last request before the worker records its answer
    const log = await send(app, 'GET', `/webhook_subscriptions/${id}/deliveries`, { token: ada.accessToken });
    expect(log.status).toBe(200);
    expect(log.json.map((d: { event_type: string; status: string; attempts: number }) => [d.event_type, d.status, d.attempts])).toEqual([
      ['event.cancelled', 'delivered', 1],
      ['event.updated', 'delivered', 1],
      ['event.updated', 'delivered', 2],
      ['event.created', 'delivered', 1],
    ]);
    const retried = log.json[2];
    expect(retried).toMatchObject({ last_status_code: 200 });
    expect(retried.last_error).toBeUndefined();
    expect((await send(app, 'GET', `/webhook_subscriptions/${id}`, { token: ada.accessToken })).json.consecutive_failures).toBe(0);
  });

  it('pauses a subscription after pause_after_failures failures in a row, and sends again once resumed', async () => {
    const { id } = await subscribe(ada);
    receiver.answer = () => 500;
    await createEvent(app, ada);
    await receiver.waitFor(3);
    const paused = await waitForStatus(id, 'paused');
    expect(paused.consecutive_failures).toBe(3);
    await sleep(400); // many retry periods: nothing more is sent while paused
    expect(receiver.received).toHaveLength(3);
    const pending = (await send(app, 'GET', `/webhook_subscriptions/${id}/deliveries`, { token: ada.accessToken })).json[0];
    expect(pending).toMatchObject({ status: 'pending', attempts: 3, last_status_code: 500, last_error: 'the receiver answered 500' });

    receiver.answer = () => 204;
    const resumed = await send(app, 'POST', `/webhook_subscriptions/${id}/resume`, { token: ada.accessToken });
    expect(resumed.json).toMatchObject({ status: 'active', consecutive_failures: 0 });
    await receiver.waitFor(4);
    expect(receiver.received[3]!.json.type).toBe('event.created');
    await waitForDelivered(id, 1);
  });

  it('sends the owner’s events to the owner’s subscriptions only, and invitation answers to the meeting’s owner', async () => {
    const bobs = await startWebhookReceiver();
    try {
      await subscribe(ada);
      await subscribe(bob, {}, bobs.url);
      const event = await createEvent(app, ada);
      await send(app, 'POST', `/events/${event.id}/invites`, { token: ada.accessToken, body: { invitee: bob.id } });
      expect((await send(app, 'PATCH', `/events/${event.id}/invite`, { token: bob.accessToken })).status).toBe(204);
      expect((await send(app, 'PATCH', `/events/${event.id}/invite`, { token: bob.accessToken })).status).toBe(204); // no change, no event
      expect((await send(app, 'DELETE', `/events/${event.id}/invite`, { token: bob.accessToken })).status).toBe(204);
      const got = await receiver.waitFor(3);
      expect(got.map((r) => r.json.type)).toEqual(['event.created', 'invite.accepted', 'invite.declined']);
      expect(got[1]!.json.data).toEqual({ event_id: event.id, room_id: event.room.id, user_id: bob.id });
      await sleep(200);
      expect(receiver.received).toHaveLength(3);
      expect(bobs.received).toHaveLength(0);
    } finally {
      await bobs.close();
    }
  });

  it('sends only the event types a subscription asked for', async () => {
    await subscribe(ada, { event_types: ['event.cancelled'] });
    const event = await createEvent(app, ada);
    await send(app, 'DELETE', `/events/${event.id}`, { token: ada.accessToken });
    const [got] = await receiver.waitFor(1);
    expect(got!.json.type).toBe('event.cancelled');
    await sleep(150);
    expect(receiver.received).toHaveLength(1);
  });

  it('lets a hanging receiver hold neither a request nor another subscription’s deliveries, nor more than one lane', async () => {
    // an instance of its own whose attempts wait 10 s: anything the hang held would take seconds
    const patient = await startTestApp({ webhooks: { allow_http: true, allow_private: true, poll_interval_ms: 20, timeout_ms: 10_000 } });
    const slow = await startWebhookReceiver();
    try {
      slow.answer = () => 'hang';
      const carol = await patient.login('carol');
      for (const url of [slow.url, receiver.url]) {
        const res = await send(patient, 'POST', '/webhook_subscriptions', { token: carol.accessToken, body: { url } });
        expect(res.status).toBe(201);
      }
      await createEvent(patient, carol);
      await slow.waitFor(1);
      const started = performance.now();
      const event = await createEvent(patient, carol);
      expect(performance.now() - started).toBeLessThan(5_000);
      const got = await receiver.waitFor(2, 5_000); // long before the hanging attempt gives up
      expect(got[1]!.json.data.event_id).toBe(event.id);
      // one attempt per subscription at a time: the second meeting's delivery waits for the lane the hang holds
      expect(slow.received).toHaveLength(1);
    } finally {
      await slow.close();
      await patient.close();
    }
  });
});

async function waitForStatus(id: string, status: string) {
  for (let i = 0; i < 200; i++) {
    const res = await send(app, 'GET', `/webhook_subscriptions/${id}`, { token: ada.accessToken });
    if (res.json.status === status) return res.json;
    await sleep(20);
  }
  throw new Error(`the subscription did not become ${status}`);
}

async function waitForDelivered(id: string, count: number) {
  for (let i = 0; i < 200; i++) {
    const res = await send(app, 'GET', `/webhook_subscriptions/${id}/deliveries`, { token: ada.accessToken });
    if (res.json.filter((d: { status: string }) => d.status === 'delivered').length === count) return;
    await sleep(20);
  }
  throw new Error(`not ${count} deliveries delivered`);
}
