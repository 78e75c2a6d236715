/**
 * Who may see an event (design.md §5): its creator, and every registered invitee whatever the
 * invite's status (a declined invitee can still look the meeting up and accept later). Everyone
 * else gets 404, as if the event did not exist. Changes to the event itself need the creator.
 */
import type { Kysely } from 'kysely';
import type { DB, EventInviteRow, EventRow } from '../../db/schema.js';
import { errors } from '../../http/errors.js';

export type EventAccess =
  | { kind: 'creator'; event: EventRow }
  | { kind: 'invitee'; event: EventRow; invite: EventInviteRow };

export async function findEventAccess(db: Kysely<DB>, userId: string, eventId: string): Promise<EventAccess | undefined> {
  const event = await db.selectFrom('events').selectAll().where('id', '=', eventId).executeTakeFirst();
  if (!event) return undefined;
  if (event.created_by === userId) return { kind: 'creator', event };
  const invite = await db
    .selectFrom('event_invites')
    .selectAll()
    .where('event_id', '=', eventId)
    .where('invitee', '=', userId)
    .executeTakeFirst();
  return invite ? { kind: 'invitee', event, invite } : undefined;
}

/** The caller's access to an event; 404 `not_found` when there is none. */
export async function requireEventAccess(db: Kysely<DB>, userId: string, eventId: string): Promise<EventAccess> {
  const access = await findEventAccess(db, userId, eventId);
  if (!access) throw errors.notFound();
  return access;
}

/** The event, when the caller created it; 404 otherwise (an invitee learns nothing more from a write). */
export async function requireEventCreator(db: Kysely<DB>, userId: string, eventId: string): Promise<EventRow> {
  const access = await requireEventAccess(db, userId, eventId);
  if (access.kind !== 'creator') throw errors.notFound();
  return access.event;
}
