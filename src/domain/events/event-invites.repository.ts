/**
 * Rows of `event_invites` (registered invitees) and `event_email_invites` (invited addresses), and
 * the room invite codes mailed with the latter. Every function takes the database or a transaction
 * first.
 */
import { randomUUID } from 'node:crypto';
import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';

import type { DB, Db, EventInviteRole, EventInviteStatus, EventRow } from '../../db/schema.js';
import { PUBLIC_PROFILE_FIELDS } from '../users/user.js';
import { notBannedFrom } from '../rooms/room-bans.repository.js';

/**
 * Changes the user's invitation to the event; no row updated when there is none, or with
 * `unlessBanned` (the invitee answering) when the user is banned from the event's room.
 */
export async function updateInvite(
  db: Db,
  eventId: string,
  userId: string,
  changes: { role?: EventInviteRole; status?: EventInviteStatus },
  { unlessBanned = false } = {},
): Promise<{ numUpdatedRows: bigint }> {
  let update = db.updateTable('event_invites').set(changes).where('event_id', '=', eventId).where('invitee', '=', userId);
  if (unlessBanned) update = update.where(notBannedFrom(sql`(select events.room_id from events where events.id = event_invites.event_id)`, userId));
  return update.executeTakeFirst();
}

/** The caller's invite status with the event's room and creator (what an answer's webhook reports). */
export async function findInviteWithEvent(db: Db, eventId: string, userId: string) {
  return db
    .selectFrom('event_invites')
    .innerJoin('events', 'events.id', 'event_invites.event_id')
    .select(['event_invites.status', 'events.room_id', 'events.created_by'])
    .where('event_invites.event_id', '=', eventId)
    .where('event_invites.invitee', '=', userId)
    .executeTakeFirst();
}

/** Invites the users not invited already (by the event's creator); answers the ids of the newly invited. */
export async function insertUserInvites(db: Db, event: EventRow, userIds: string[], role: EventInviteRole): Promise<string[]> {
  const inserted = await db
    .insertInto('event_invites')
    .values(userIds.map((id) => ({ event_id: event.id, invitee: id, role, created_by: event.created_by })))
    .onConflict((conflict) => conflict.columns(['event_id', 'invitee']).doNothing())
    .returning('invitee')
    .execute();
  return inserted.map((row) => row.invitee);
}

/**
 * Invites an address no registered user has, with a room invite code (no expiry) that lets them
 * join as a guest until they register. The invite row goes in first, so that of two concurrent
 * requests only the one that inserted it creates a code. False when the address was invited already.
 */
export async function insertEmailInvite(trx: Db, event: EventRow, email: string, role: EventInviteRole, callerId: string): Promise<boolean> {
  const inserted = await trx
    .insertInto('event_email_invites')
    .values({ event_id: event.id, email, role, created_by: callerId })
    .onConflict((conflict) => conflict.columns(['event_id', 'email']).doNothing())
    .returning('email')
    .executeTakeFirst();
  if (!inserted) return false;
  const { code } = await trx
    .insertInto('room_invites')
    .values({ code: randomUUID(), room_id: event.room_id, created_by: callerId, updated_by: callerId, expiration: null })
    .returning('code')
    .executeTakeFirstOrThrow();
  await trx.updateTable('event_email_invites').set({ room_invite_code: code }).where('event_id', '=', event.id).where('email', '=', email).execute();
  return true;
}

/**
 * Removes the users' invitations and their favorites of the event (their access to the event and
 * its room follows from the invitation, so it ends too); answers the addresses of the uninvited.
 */
export async function deleteUserInvites(trx: Db, eventId: string, userIds: string[]): Promise<string[]> {
  if (userIds.length === 0) return [];
  const removed = await trx.deleteFrom('event_invites').where('event_id', '=', eventId).where('invitee', 'in', userIds).returning('invitee').execute();
  if (removed.length === 0) return [];
  const ids = removed.map((row) => row.invitee);
  await trx.deleteFrom('event_favorites').where('event_id', '=', eventId).where('user_id', 'in', ids).execute();
  const users = await trx.selectFrom('users').select('email').where('id', 'in', ids).execute();
  return users.map((user) => user.email);
}

/**
 * Removes the e-mail invitation of the address and deactivates the room invite code that was mailed
 * with it, so the withdrawn guest cannot join with it any more; answers the removed addresses.
 */
export async function deleteEmailInvites(trx: Db, eventId: string, email: string, callerId: string): Promise<string[]> {
  const removed = await trx
    .deleteFrom('event_email_invites')
    .where('event_id', '=', eventId)
    .where('email', '=', email)
    .returning(['email', 'room_invite_code'])
    .execute();
  const codes = removed.flatMap((row) => (row.room_invite_code ? [row.room_invite_code] : []));
  if (codes.length > 0) {
    await trx.updateTable('room_invites').set({ active: false, updated_by: callerId, updated_at: new Date() }).where('code', 'in', codes).execute();
  }
  return removed.map((row) => row.email);
}

/** Per event, its registered and its e-mail invitees' numbers. */
export async function countInvitees(db: Db, eventIds: string[]): Promise<Map<string, { registered: number; email: number }>> {
  const counts = new Map<string, { registered: number; email: number }>();
  const entry = (id: string) => counts.get(id) ?? counts.set(id, { registered: 0, email: 0 }).get(id)!;
  for (const [table, kind] of [
    ['event_invites', 'registered'],
    ['event_email_invites', 'email'],
  ] as const) {
    const rows = await db
      .selectFrom(table)
      .where('event_id', 'in', eventIds)
      .groupBy('event_id')
      .select((eb) => ['event_id', eb.fn.countAll<number | string>().as('count')])
      .execute();
    for (const row of rows) entry(row.event_id)[kind] = Number(row.count);
  }
  return counts;
}

/** Each list's order (oldest invite first), as SQL for the ORDER BY and for the per-event window. */
const REGISTERED_ORDER = sql`event_invites.created_at, event_invites.invitee`;
const EMAIL_ORDER = sql`event_email_invites.created_at, event_email_invites.email`;

function registeredQuery(db: Db, eventIds: string[]) {
  return db
    .selectFrom('event_invites')
    .innerJoin('users', 'users.id', 'event_invites.invitee')
    .where('event_invites.event_id', 'in', eventIds)
    .select(['event_invites.event_id', 'event_invites.role', 'event_invites.status'])
    .select(PUBLIC_PROFILE_FIELDS.map((field) => `users.${field}` as const))
    .orderBy(REGISTERED_ORDER);
}

function emailQuery(db: Db, eventIds: string[]) {
  return db
    .selectFrom('event_email_invites')
    .where('event_email_invites.event_id', 'in', eventIds)
    .select(['event_email_invites.event_id', 'event_email_invites.email', 'event_email_invites.role'])
    .orderBy(EMAIL_ORDER);
}

export type RegisteredInviteeRow = Awaited<ReturnType<ReturnType<typeof registeredQuery>['execute']>>[number];
export type EmailInviteeRow = Awaited<ReturnType<ReturnType<typeof emailQuery>['execute']>>[number];

/** A window of the event's registered invitees, oldest invite first. */
export async function pageOfRegisteredInvitees(db: Db, eventId: string, limit: number, offset: number): Promise<RegisteredInviteeRow[]> {
  return registeredQuery(db, [eventId]).limit(limit).offset(offset).execute();
}

/** A window of the event's invited addresses, oldest invite first. */
export async function pageOfEmailInvitees(db: Db, eventId: string, limit: number, offset: number): Promise<EmailInviteeRow[]> {
  return emailQuery(db, [eventId]).limit(limit).offset(offset).execute();
}

/** The first `limit` registered invitees of each event. */
export async function firstRegisteredInviteesOf(db: Db, eventIds: string[], limit: number): Promise<RegisteredInviteeRow[]> {
  return firstPerEvent(db, registeredQuery(db, eventIds), REGISTERED_ORDER, limit);
}

/** The first `limit` invited addresses of each event. */
export async function firstEmailInviteesOf(db: Db, eventIds: string[], limit: number): Promise<EmailInviteeRow[]> {
  return firstPerEvent(db, emailQuery(db, eventIds), EMAIL_ORDER, limit);
}

/** The first `limit` rows of each event in `list`, by a window function over the list's order. */
async function firstPerEvent<Row extends { event_id: string }>(
  db: Db,
  list: SelectQueryBuilder<DB, keyof DB, Row>,
  order: RawBuilder<unknown>,
  limit: number,
): Promise<Row[]> {
  // `ranked` compiles to a parenthesised subquery
  const ranked = list.select(sql<string>`row_number() over (partition by event_id order by ${order})`.as('position'));
  const { rows } = await sql<Row>`select * from ${ranked} as ranked where position <= ${limit} order by event_id, position`.execute(db);
  return rows;
}
