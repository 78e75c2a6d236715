/**
 * What a user's calendar feed holds, read in two queries: the events (with their creators and the
 * user's invitation), then the exceptions of all of them.
 *
 * - The user's events: those they created, and those they are invited to and have not declined,
 *   unless they are banned from the event's room (a ban overrides the invitation everywhere, see
 *   rooms/room-bans.ts). Pending and tentative invitations are in, shown as `TENTATIVE`.
 * - Timed events only: a time-independent event has no date a calendar could show it on.
 * - The window: events with an occurrence ending at `from` or later (`span_end`; null for a series
 *   without end). The cap keeps the first `limit` in the order `greatest(span_start, from)`: the
 *   events running at `from` (long series included) first, then by their first start, so what is
 *   cut are the events furthest in the future.
 */
import { sql, type Kysely } from 'kysely';
import type { DB, EventExceptionRow, EventInviteStatus, EventRow } from '../../db/schema.js';
import { notBannedFrom } from '../rooms/room-bans.repository.js';

type Db = Kysely<DB>;

export interface FeedEventRow extends EventRow {
  creator_email: string;
  creator_name: string;
  /** The user's invitation; null for their own events. */
  my_status: EventInviteStatus | null;
}

export async function feedEvents(db: Db, userId: string, from: Date, limit: number): Promise<FeedEventRow[]> {
  return db
    .selectFrom('events as e')
    .innerJoin('users as creator', 'creator.id', 'e.created_by')
    .leftJoin('event_invites as mine', (join) => join.onRef('mine.event_id', '=', 'e.id').on('mine.invitee', '=', userId))
    .selectAll('e')
    .select(['creator.email as creator_email', 'creator.display_name as creator_name', 'mine.status as my_status'])
    .where('e.is_time_independent', '=', false)
    .where('e.span_start', 'is not', null)
    .where((eb) => eb.or([eb('e.span_end', '>=', from), eb('e.span_end', 'is', null)]))
    .where((eb) =>
      eb.or([
        eb('e.created_by', '=', userId),
        eb.and([eb('mine.status', '<>', 'declined'), notBannedFrom(sql.ref('e.room_id'), userId)]),
      ]),
    )
    .orderBy(sql`greatest(e.span_start, ${from}::timestamptz)`)
    .orderBy('e.id')
    .limit(limit)
    .execute();
}

/** The exceptions of the given events, by event and original start. */
export async function feedExceptions(db: Db, eventIds: readonly string[]): Promise<EventExceptionRow[]> {
  if (eventIds.length === 0) return [];
  return db
    .selectFrom('event_exceptions')
    .selectAll()
    .where(sql<boolean>`event_id = any(${[...eventIds]}::uuid[])`)
    .orderBy('event_id')
    .orderBy('instance_start')
    .execute();
}
