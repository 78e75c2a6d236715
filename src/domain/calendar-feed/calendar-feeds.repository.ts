/**
 * The `calendar_feeds` rows: one per user at most, holding the SHA-256 of the feed's secret token.
 * A token is looked up by its hash through the unique index, so no code compares secrets.
 *
 * And what a user's calendar feed holds, read in two queries: the events (with their creators and the
 * user's invitation), then the exceptions of all of them.
 *
 * - The user's events: those they created, and those they are invited to and have not declined,
 *   unless they are banned from the event's room (a ban overrides the invitation everywhere, see
 *   rooms/room-bans.repository.ts). Pending and tentative invitations are in, shown as `TENTATIVE`.
 * - Timed events only: a time-independent event has no date a calendar could show it on.
 * - The window: events with an occurrence ending at `from` or later (`span_end`; null for a series
 *   without end). The cap keeps the first `limit` in the order `greatest(span_start, from)`: the
 *   events running at `from` (long series included) first, then by their first start, so what is
 *   cut are the events furthest in the future.
 */
import { createHash, randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { DB, EventExceptionRow, EventInviteStatus, EventRow } from '../../db/schema.js';
import { notBannedFrom } from '../rooms/room-bans.repository.js';

type Db = Kysely<DB>;

/** 256 random bits, base64url: 43 characters that need no escaping in a URL. */
export function newFeedToken(): string {
  return randomBytes(32).toString('base64url');
}

export function feedTokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Stores the hash of a new token for the user, replacing the one before (whose URL stops working). */
export async function replaceFeed(db: Db, userId: string, tokenHash: string): Promise<Date> {
  const row = await db
    .insertInto('calendar_feeds')
    .values({ user_id: userId, token_hash: tokenHash })
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ token_hash: tokenHash, created_at: new Date() }))
    .returning('created_at')
    .executeTakeFirstOrThrow();
  return row.created_at;
}

export async function findFeedOf(db: Db, userId: string): Promise<{ created_at: Date } | undefined> {
  return db.selectFrom('calendar_feeds').select('created_at').where('user_id', '=', userId).executeTakeFirst();
}

/** True when the user had a feed. */
export async function deleteFeedOf(db: Db, userId: string): Promise<boolean> {
  const result = await db.deleteFrom('calendar_feeds').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The user whose feed has this token hash; none for an unknown token or a disabled user. */
export async function feedOwner(db: Db, tokenHash: string): Promise<{ id: string } | undefined> {
  return db
    .selectFrom('calendar_feeds')
    .innerJoin('users', 'users.id', 'calendar_feeds.user_id')
    .select('users.id')
    .where('calendar_feeds.token_hash', '=', tokenHash)
    .where('users.disabled_at', 'is', null)
    .executeTakeFirst();
}

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
    .where((eb) => eb.or([eb('e.created_by', '=', userId), eb.and([eb('mine.status', '<>', 'declined'), notBannedFrom(sql.ref('e.room_id'), userId)])]))
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
