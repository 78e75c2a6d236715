/**
 * A meeting that goes with its room (issue 20): deleting the room, or `convene cleanup` deleting a
 * past ad-hoc meeting, sends `event.cancelled` for it, as deleting the meeting itself does, queued
 * in the transaction of the deletion. A room without a meeting sends nothing when deleted.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanUp } from '../../../src/domain/admin/cleanup.js';
import { createFileAssetStorage } from '../../../src/domain/assets/asset-storage.js';
import { checkWebhook } from '../../support/contract.js';
import { createEvent, send, timeIndependentBody } from '../../support/events.js';
import { createRoom } from '../../support/rooms.js';
import { dbOf, useTestApp, type TestUser } from '../../support/test-app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

const app = useTestApp({ webhooks: { allow_http: true, allow_private: true, poll_interval_ms: 20, retry_base_ms: 50 } });
let ada: TestUser;
let receiver: WebhookReceiver;
beforeEach(async () => {
  ada = await app.login('ada');
  receiver = await startWebhookReceiver();
  const res = await send(app, 'POST', '/webhook_subscriptions', { token: ada.accessToken, body: { url: receiver.url } });
  expect(res.status).toBe(201);
});
afterEach(() => receiver.close());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a meeting deleted with its room', () => {
  it('DELETE /rooms/{id} sends event.cancelled for the room’s meeting', async () => {
    const event = await createEvent(app, ada, timeIndependentBody({ title: 'Goes with the room' }));
    await receiver.waitFor(1);
    expect((await send(app, 'DELETE', `/rooms/${event.room.id}`, { token: ada.accessToken })).status).toBe(204);
    const got = await receiver.waitFor(2);
    expect(got.map((r) => r.json.type)).toEqual(['event.created', 'event.cancelled']);
    expect(got[1]!.json.data).toEqual({ event_id: event.id, room_id: event.room.id, title: 'Goes with the room', is_time_independent: true });
    checkWebhook(got[1]!.headers, got[1]!.body);
    await sleep(200);
    expect(receiver.received).toHaveLength(2);
  });

  it('deleting a room without a meeting sends nothing, nor does another user’s failed attempt', async () => {
    const room = await createRoom(app, ada);
    const eve = await app.login('eve');
    expect((await send(app, 'DELETE', `/rooms/${room.id}`, { token: eve.accessToken })).status).toBe(404);
    expect((await send(app, 'DELETE', `/rooms/${room.id}`, { token: ada.accessToken })).status).toBe(204);
    const event = await createEvent(app, ada, timeIndependentBody());
    expect((await send(app, 'DELETE', `/rooms/${event.room.id}`, { token: eve.accessToken })).status).toBe(404);
    await sleep(300);
    expect(receiver.received.map((r) => r.json.type)).toEqual(['event.created']);
  });

  it('convene cleanup sends event.cancelled for each past ad-hoc meeting it deletes, and nothing on a dry run', async () => {
    const old = await createEvent(app, ada, timeIndependentBody({ title: 'Instant', is_adhoc: true }));
    const recent = await createEvent(app, ada, timeIndependentBody({ title: 'Instant too', is_adhoc: true }));
    await receiver.waitFor(2);
    const now = new Date();
    await dbOf(app)
      .updateTable('events')
      .set({ created_at: new Date(now.getTime() - 2 * 3_600_000) })
      .where('id', '=', old.id)
      .execute();
    const storage = await createFileAssetStorage(await mkdtemp(join(tmpdir(), 'convene-cleanup-')), { removeOnClose: true });
    try {
      await cleanUp(dbOf(app), storage, { now, adhocRetentionMs: 3_600_000, dryRun: true });
      await sleep(300);
      expect(receiver.received).toHaveLength(2);
      await cleanUp(dbOf(app), storage, { now, adhocRetentionMs: 3_600_000, dryRun: false });
    } finally {
      await storage.close();
    }
    const got = await receiver.waitFor(3);
    expect(got[2]!.json).toMatchObject({ type: 'event.cancelled', data: { event_id: old.id, room_id: old.room.id, title: 'Instant' } });
    checkWebhook(got[2]!.headers, got[2]!.body);
    await sleep(200);
    expect(receiver.received).toHaveLength(3);
    expect(receiver.received.filter((r) => r.json.data.event_id === recent.id).map((r) => r.json.type)).toEqual(['event.created']);
  });
});
