/**
 * Queues webhook events (a transactional outbox, as the e-mail outbox is): called with the
 * transaction of the change it reports, the message and one delivery row per interested
 * subscription commit with the change or not at all. The delivery worker (`delivery-worker.ts`)
 * sends them.
 *
 * Who is interested: the subscriptions of the owner (creator) of the room or meeting concerned that
 * asked for this type, and every operator subscription (no owner) that did. Without any, nothing is
 * written.
 *
 * Events decided outside a transaction (signaling, possibly seen by several instances) are queued
 * through a `WebhookOutbox`, several at a time in one statement (atomic), and pass a `dedupeKey`
 * naming the change: the second instance's enqueue of the same change is dropped by the unique key.
 */
import { randomUUID } from 'node:crypto';
import type { components } from '../../../generated/openapi.js';
import type { Db } from '../../db/schema.js';
import { queueMessages, type QueuedMessage } from './webhooks.repository.js';

export type WebhookEventType = components['schemas']['WebhookEventType'];
type Schemas = components['schemas'];

/** The `data` of each event type, as the contract's webhooks describe it. */
export interface WebhookData {
  'room.started': Schemas['WebhookRoomData'];
  'room.ended': Schemas['WebhookRoomData'];
  'participant.joined': Schemas['WebhookParticipantData'];
  'participant.left': Schemas['WebhookParticipantData'];
  'waiting_room.entered': Schemas['WebhookWaitingRoomData'];
  'timer.started': Schemas['WebhookTimerStartedData'];
  'timer.stopped': Schemas['WebhookTimerStoppedData'];
  'event.created': Schemas['WebhookEventData'];
  'event.updated': Schemas['WebhookEventData'];
  'event.cancelled': Schemas['WebhookEventData'];
  'invite.accepted': Schemas['WebhookInviteData'];
  'invite.declined': Schemas['WebhookInviteData'];
}

export const WEBHOOK_EVENT_TYPES = [
  'room.started',
  'room.ended',
  'participant.joined',
  'participant.left',
  'waiting_room.entered',
  'timer.started',
  'timer.stopped',
  'event.created',
  'event.updated',
  'event.cancelled',
  'invite.accepted',
  'invite.declined',
] as const satisfies readonly WebhookEventType[];

export interface WebhookEvent<T extends WebhookEventType> {
  type: T;
  data: WebhookData[T];
  /** The user who owns the room or meeting concerned (its creator). */
  owner: string;
  at: Date;
  /** Names the change when it may be enqueued more than once (by several instances). */
  dedupeKey?: string;
}

/** `room:<id>` or `event:<id>`: deliveries of one subject go out in order. */
function subjectOf(data: WebhookData[WebhookEventType]): string {
  return 'event_id' in data ? `event:${data.event_id}` : `room:${data.room_id}`;
}

/** The message of an event, as the outbox stores it. */
function messageOf(event: WebhookEvent<WebhookEventType>): QueuedMessage & { owner: string } {
  const id = `msg_${randomUUID().replaceAll('-', '')}`;
  const body = JSON.stringify({ id, type: event.type, timestamp: event.at.toISOString(), data: event.data });
  return { id, type: event.type, subject: subjectOf(event.data), body, dedupeKey: event.dedupeKey ?? null, owner: event.owner };
}

/** Queues the event, in the transaction of the change it reports when `db` is one. */
export async function enqueueWebhook<T extends WebhookEventType>(db: Db, event: WebhookEvent<T>): Promise<void> {
  await queueMessages(db, [messageOf(event)]);
}

/** The outbox for changes made outside the database (signaling's), which have no transaction to join. */
export interface WebhookOutbox {
  /** Queues the events in their order, atomically (one statement). */
  enqueue(events: readonly WebhookEvent<WebhookEventType>[]): Promise<void>;
}

export function createWebhookOutbox(db: Db): WebhookOutbox {
  return {
    enqueue: (events) => queueMessages(db, events.map(messageOf)),
  };
}
