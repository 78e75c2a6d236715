/**
 * The `calendar_feeds` rows: one per user at most, holding the SHA-256 of the feed's secret token.
 * A token is looked up by its hash through the unique index, so no code compares secrets.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

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
