/**
 * Who may see an event (docs/architecture.md §5): its creator, and every registered invitee whatever the
 * invite's status (a declined invitee can still look the meeting up and accept later) but one
 * banned from the event's room (rooms/room-bans.repository.ts). Everyone else gets 404, as if the event did
 * not exist. Changes to the event itself need the creator.
 */
import type { Db, EventRow } from '../../db/schema.js';
import { errors } from '../../errors.js';
import { findEventWithMyInvite } from './events.repository.js';

export type EventAccess = { kind: 'creator' | 'invitee'; event: EventRow };

/** The rule itself, for a row read with the caller's invite joined: creator or invited. */
export const mayRead = (callerId: string, createdBy: string, invited: boolean): boolean => createdBy === callerId || invited;

/** The event and the caller's relation to it, in one query; undefined when there is none. */
async function findEventAccess(db: Db, userId: string, eventId: string): Promise<EventAccess | undefined> {
  const row = await findEventWithMyInvite(db, userId, eventId);
  if (!row || !mayRead(userId, row.created_by, row.my_invitee !== null)) return undefined;
  const { my_invitee: _, ...event } = row;
  return { kind: event.created_by === userId ? 'creator' : 'invitee', event };
}

/** The caller's access to an event; 404 `not_found` when there is none. */
export async function requireEventAccess(db: Db, userId: string, eventId: string): Promise<EventAccess> {
  const access = await findEventAccess(db, userId, eventId);
  if (!access) throw errors.notFound();
  return access;
}

/** The event, when the caller created it; 404 otherwise (an invitee learns nothing more from a write). */
export async function requireEventCreator(db: Db, userId: string, eventId: string): Promise<EventRow> {
  const access = await requireEventAccess(db, userId, eventId);
  if (access.kind !== 'creator') throw errors.notFound();
  return access.event;
}
