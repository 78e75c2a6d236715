/**
 * The webhook events of signaling (room started and ended, participant joined and left, waiting
 * room, timer), queued in the webhook outbox (src/domain/webhooks/outbox.ts) by the instance where
 * the change was decided: the one holding the participant's socket, after the membership store
 * (in Redis: one atomic script) said this join was the room's first or this leave its last. No
 * transaction spans a signaling change, so each event carries a dedupe key naming the change
 * itself (the room's session start, the timer id, the participant's join time): should two
 * instances ever queue the same change, the outbox keeps one.
 *
 * Queueing does not hold the socket: it runs beside the command. A room's events enter the outbox
 * in order, those that waited meanwhile together (at most `EVENTS_PER_STATEMENT` in one statement:
 * a join storm is hundreds of events per room, each insert a round trip). An insert that fails (the
 * database away) is tried again, waiting `retryBaseMs` doubling up to `retryMaxMs`, until it
 * succeeds (at least once: the dedupe key makes a repeat harmless). The events wait in memory, at
 * most `maxQueued` of them (beyond, the oldest is dropped, logged and counted); `close` gives them
 * a time limit to reach the outbox. What a process crash finds in memory is lost.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { WebhookData, WebhookEvent, WebhookEventType, WebhookOutbox } from '../domain/webhooks/outbox.js';
import type { Logger } from '../logger.js';
import type { RoomContext } from './room-context.js';
import type { Session } from './session.js';

/** What an event needs of its room: which one, and whose subscriptions hear of it. */
type EventRoom = Pick<RoomContext, 'roomId' | 'ownerId'>;

export interface SignalingWebhooks {
  emit<T extends WebhookEventType>(room: EventRoom, type: T, data: WebhookData[T], dedupeKey: string): void;
  /** Events waiting for the outbox. */
  pending(): number;
  /** Waits up to `limitMs` for the waiting events to reach the outbox; what remains then is dropped (and logged). */
  close(limitMs: number): Promise<void>;
}

export interface SignalingWebhooksOptions {
  maxQueued: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** Called for each event dropped (the queue full, or left at close). */
  onDrop(): void;
}

/** A room of 100 leaving while the database is away is 100 events: room for many such. */
export const SIGNALING_WEBHOOKS_DEFAULTS: Omit<SignalingWebhooksOptions, 'onDrop'> = { maxQueued: 10_000, retryBaseMs: 200, retryMaxMs: 10_000 };

/** Events of a room inserted in one statement at most. */
export const EVENTS_PER_STATEMENT = 100;

interface Queued {
  room: EventRoom;
  event: WebhookEvent<WebhookEventType>;
  dropped: boolean;
}

export function createSignalingWebhooks(outbox: WebhookOutbox, logger: Logger, options: SignalingWebhooksOptions): SignalingWebhooks {
  // every waiting event in arrival order (the oldest first, dropped first), and per room, so that
  // a room's events enter the outbox in the order they happened here
  const all = new Set<Queued>();
  const rooms = new Map<string, Queued[]>();
  const stopping = new AbortController();
  let drained: (() => void) | undefined;

  function drop(item: Queued, why: string): void {
    if (item.dropped) return;
    item.dropped = true;
    all.delete(item);
    options.onDrop();
    logger.warn({ roomId: item.room.roomId, type: item.event.type }, `a webhook event of signaling was dropped: ${why}`);
  }

  /**
   * Inserts the events at the head of the room's queue (up to EVENTS_PER_STATEMENT, less those
   * dropped meanwhile), trying until it succeeds; answers how many of the queue's first entries are
   * done with, 0 when the queue is stopped first.
   */
  async function insertHead(queue: Queued[]): Promise<number> {
    for (let attempt = 0; !stopping.signal.aborted; attempt++) {
      const head = queue.slice(0, EVENTS_PER_STATEMENT);
      const batch = head.filter((item) => !item.dropped);
      try {
        if (batch.length > 0) await outbox.enqueue(batch.map((item) => item.event));
        return head.length;
      } catch (err) {
        const waitMs = Math.min(options.retryBaseMs * 2 ** attempt, options.retryMaxMs);
        const { roomId } = queue[0]!.room;
        logger.warn({ err, roomId, events: batch.length, attempt, waitMs }, 'queueing webhook events of signaling failed; trying again');
        await sleep(waitMs, undefined, { signal: stopping.signal }).catch(() => undefined);
      }
    }
    return 0;
  }

  async function drain(roomId: string, queue: Queued[]): Promise<void> {
    while (queue.length > 0) {
      const done = await insertHead(queue);
      if (done === 0) for (const item of queue) drop(item, 'shutting down before the database took it');
      for (const item of queue.splice(0, done === 0 ? queue.length : done)) all.delete(item);
    }
    rooms.delete(roomId);
    if (all.size === 0) drained?.();
  }

  return {
    emit(room, type, data, dedupeKey) {
      const item: Queued = { room, event: { type, data, owner: room.ownerId, at: new Date(), dedupeKey }, dropped: false };
      if (all.size >= options.maxQueued) drop(all.values().next().value!, `more than ${options.maxQueued} waiting`);
      all.add(item);
      const queue = rooms.get(room.roomId);
      if (queue) return void queue.push(item);
      const fresh = [item];
      rooms.set(room.roomId, fresh);
      void drain(room.roomId, fresh);
    },
    pending: () => all.size,
    async close(limitMs) {
      if (all.size > 0) {
        const empty = new Promise<void>((resolve) => (drained = resolve));
        const timer = setTimeout(() => stopping.abort(), limitMs);
        await Promise.race([empty, new Promise((resolve) => stopping.signal.addEventListener('abort', resolve))]);
        clearTimeout(timer);
      }
      stopping.abort();
      // at once: an insert under way may hang until the database's timeout (should it then succeed, the event goes out as well)
      for (const item of [...all]) drop(item, 'shutting down before the database took it');
    },
  };
}

/** A participant entered the room; `first`: the room's session began with it (at `startedAtMs`). */
export function announceJoin(webhooks: SignalingWebhooks | undefined, session: Session, startedAtMs: number, first: boolean): void {
  if (!webhooks) return;
  const { room, participant } = session;
  // the room's session start names it: every joiner of that session reads the same one
  if (first) webhooks.emit(room, 'room.started', { room_id: room.roomId }, `room.started:${room.roomId}:${startedAtMs}`);
  webhooks.emit(
    room,
    'participant.joined',
    { ...participantData(session), role: session.role },
    `participant.joined:${room.roomId}:${participant.id}:${session.joinedAt}`,
  );
}

/** A participant left the room (this instance removed it); `last`: the room is empty now. */
export function announceLeave(webhooks: SignalingWebhooks | undefined, session: Session, last: boolean): void {
  if (!webhooks) return;
  const { room, participant } = session;
  const change = `${room.roomId}:${participant.id}:${session.joinedAt}`;
  webhooks.emit(room, 'participant.left', { ...participantData(session), role: session.role }, `participant.left:${change}`);
  if (last) webhooks.emit(room, 'room.ended', { room_id: room.roomId }, `room.ended:${change}`);
}

const KIND = { user: 'user', guest: 'guest', sip: 'call_in' } as const;

/** A participant as `participant.*` and `waiting_room.entered` carry it: no invite code, no call-in id. */
export function participantData(session: Session) {
  const { participant, room } = session;
  return {
    room_id: room.roomId,
    participant_id: participant.id,
    kind: KIND[participant.kind],
    ...(participant.who.kind === 'user' ? { user_id: participant.who.userId } : {}),
    display_name: session.displayName ?? '',
  };
}
