/**
 * Signaling's webhook events reach the outbox in batches: the events of a room that waited while an
 * insert was under way go in together, in one statement, in the order they happened (the deliveries'
 * ids follow it, which is the order the worker sends a subject's deliveries in), at most
 * `EVENTS_PER_STATEMENT` at a time. Events nobody subscribed to are not written, and a change queued
 * twice is one message.
 */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createWebhookOutbox, type WebhookOutbox } from '../../../src/domain/webhooks/outbox.js';
import { createSignalingWebhooks, EVENTS_PER_STATEMENT } from '../../../src/signaling/webhooks.js';
import { dbOf, useTestApp } from '../../support/test-app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

const app = useTestApp({ webhooks: { allow_http: true, allow_private: true } });

let receiver: WebhookReceiver;
beforeEach(async () => {
  receiver = await startWebhookReceiver();
});
afterEach(() => receiver.close());

/**
 * Ada, subscribed to `eventTypes`, and a signaling queue for one of her rooms whose inserts (the
 * real outbox) are recorded: each statement's dedupe keys, and the room's deliveries in id order.
 */
async function roomQueue(eventTypes: string[]) {
  const ada = await app.login('ada');
  const subscribed = await fetch(`${app.url}/v1/webhook_subscriptions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ada.accessToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: receiver.url, event_types: eventTypes }),
  });
  expect(subscribed.status).toBe(201);
  const outbox = createWebhookOutbox(dbOf(app));
  const batches: string[][] = [];
  const recording: WebhookOutbox = {
    enqueue: (events) => {
      batches.push(events.map((event) => event.dedupeKey ?? ''));
      return outbox.enqueue(events);
    },
  };
  const queue = createSignalingWebhooks(recording, pino({ level: 'silent' }), { maxQueued: 1_000, retryBaseMs: 20, retryMaxMs: 100, onDrop: () => {} });
  const room = { roomId: randomUUID(), ownerId: ada.id };
  const delivered = () =>
    dbOf(app)
      .selectFrom('webhook_deliveries')
      .innerJoin('webhook_messages', 'webhook_messages.id', 'webhook_deliveries.message_id')
      .select(['webhook_messages.dedupe_key', 'webhook_messages.type'])
      .where('webhook_deliveries.subject', '=', `room:${room.roomId}`)
      .orderBy('webhook_deliveries.id')
      .execute();
  return { queue, room, batches, delivered };
}

it("queues a room's waiting events together and in order; unwanted ones are not written, a repeated change is one message", async () => {
  const { queue, room, batches, delivered } = await roomQueue(['room.started', 'participant.joined']);
  const joined = (n: number) => ({ room_id: room.roomId, participant_id: randomUUID(), kind: 'guest', display_name: `Guest ${n}`, role: 'guest' }) as const;

  queue.emit(room, 'room.started', { room_id: room.roomId }, 'started');
  for (const n of [1, 2, 3]) queue.emit(room, 'participant.joined', joined(n), `joined-${n}`);
  queue.emit(room, 'room.ended', { room_id: room.roomId }, 'ended'); // nobody asked for it
  queue.emit(room, 'participant.joined', joined(1), 'joined-1'); // the same change once more
  await queue.close(5_000);

  // the first event leaves at once; the rest waited for it and go together
  expect(batches).toEqual([['started'], ['joined-1', 'joined-2', 'joined-3', 'ended', 'joined-1']]);
  expect(await delivered()).toEqual([
    { dedupe_key: 'started', type: 'room.started' },
    { dedupe_key: 'joined-1', type: 'participant.joined' },
    { dedupe_key: 'joined-2', type: 'participant.joined' },
    { dedupe_key: 'joined-3', type: 'participant.joined' },
  ]);
  expect(await dbOf(app).selectFrom('webhook_messages').select('dedupe_key').where('dedupe_key', '=', 'ended').execute()).toEqual([]);
});

it(`inserts at most ${EVENTS_PER_STATEMENT} events in one statement, the rest in the next, all in order`, async () => {
  const { queue, room, batches, delivered } = await roomQueue(['room.started']);
  const keys = Array.from({ length: EVENTS_PER_STATEMENT + 2 }, (_, n) => `batch-${String(n).padStart(3, '0')}`);
  for (const key of keys) queue.emit(room, 'room.started', { room_id: room.roomId }, key);
  await queue.close(5_000);

  // the first leaves at once; of the others, a full statement and then the last one
  expect(batches.map((batch) => batch.length)).toEqual([1, EVENTS_PER_STATEMENT, 1]);
  expect((await delivered()).map((row) => row.dedupe_key)).toEqual(keys);
});
