/**
 * The webhook events of signaling (room started and ended, participant joined and left, waiting
 * room, timer), queued in the webhook outbox (src/domain/webhooks/outbox.ts) by the instance where
 * the change was decided: the one holding the participant's socket, after the membership store
 * (in Redis: one atomic script) said this join was the room's first or this leave its last. No
 * transaction spans a signaling change, so each event carries a dedupe key naming the change
 * itself (the room's session start, the timer id, the participant's join time): should two
 * instances ever queue the same change, the outbox keeps one.
 *
 * Queueing does not hold the socket: it runs beside the command, and a failure is logged (the
 * event is then lost, unlike the HTTP events, which commit with their change).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { enqueueWebhook, type WebhookData, type WebhookEventType } from '../domain/webhooks/outbox.js';
import type { Logger } from '../logger.js';
import type { RoomContext } from './room-context.js';
import type { Session } from './session.js';

export interface SignalingWebhooks {
  emit<T extends WebhookEventType>(room: RoomContext, type: T, data: WebhookData[T], dedupeKey: string): void;
}

export function createSignalingWebhooks(db: Kysely<DB>, logger: Logger): SignalingWebhooks {
  // one queue per room, so that a room's events enter the outbox in the order they happened here
  const queues = new Map<string, Promise<void>>();
  return {
    emit(room, type, data, dedupeKey) {
      const at = new Date();
      const queued = (queues.get(room.roomId) ?? Promise.resolve())
        .then(() => db.transaction().execute((trx) => enqueueWebhook(trx, { type, data, owner: room.ownerId, at, dedupeKey })))
        .catch((err: unknown) => logger.error({ err, roomId: room.roomId, type }, 'a webhook event of signaling could not be queued'));
      queues.set(room.roomId, queued);
      void queued.then(() => {
        if (queues.get(room.roomId) === queued) queues.delete(room.roomId);
      });
    },
  };
}

/** A participant entered the room; `first`: the room's session began with it (at `startedAtMs`). */
export function announceJoin(webhooks: SignalingWebhooks | undefined, session: Session, startedAtMs: number, first: boolean): void {
  if (!webhooks) return;
  const { room, participant } = session;
  // the room's session start names it: every joiner of that session reads the same one
  if (first) webhooks.emit(room, 'room.started', { room_id: room.roomId }, `room.started:${room.roomId}:${startedAtMs}`);
  webhooks.emit(room, 'participant.joined', { ...participantData(session), role: session.role }, `participant.joined:${room.roomId}:${participant.id}:${session.joinedAt}`);
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
