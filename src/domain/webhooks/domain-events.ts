/**
 * The webhook events of meetings and invitations, queued in the transaction of the change (see
 * outbox.ts). Their bodies carry what identifies the meeting and its times, never its room's
 * password, invite codes or call-in pin.
 */
import type { Db } from '../../db/schema.js';
import { enqueueWebhook } from './outbox.js';
import { findEventForWebhook } from './webhooks.repository.js';

/** Reads the meeting as it is in `trx` (for `event.cancelled`: call before deleting it). */
export async function queueEventWebhook(trx: Db, type: 'event.created' | 'event.updated' | 'event.cancelled', eventId: string, at = new Date()): Promise<void> {
  const event = await findEventForWebhook(trx, eventId);
  if (!event) return;
  await enqueueWebhook(trx, {
    type,
    owner: event.created_by,
    at,
    data: {
      event_id: event.id,
      room_id: event.room_id,
      title: event.title,
      is_time_independent: event.is_time_independent,
      ...(event.starts_at ? { starts_at: event.starts_at.toISOString() } : {}),
      ...(event.ends_at ? { ends_at: event.ends_at.toISOString() } : {}),
    },
  });
}

export async function queueInviteAnswerWebhook(
  trx: Db,
  status: 'accepted' | 'declined',
  event: { id: string; room_id: string; created_by: string },
  userId: string,
  at = new Date(),
): Promise<void> {
  await enqueueWebhook(trx, {
    type: status === 'accepted' ? 'invite.accepted' : 'invite.declined',
    owner: event.created_by,
    at,
    data: { event_id: event.id, room_id: event.room_id, user_id: userId },
  });
}
