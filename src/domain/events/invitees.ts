/**
 * The invitee view of events (the contract Invitee): registered invitees first (oldest invite
 * first), then e-mail invitees (oldest first). Used by the invite list and by event answers
 * (`invitees` / `invitees_truncated`), the latter batched for a page of events.
 */
import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely';

import type { components } from '../../../generated/openapi.js';
import type { DB, EmailInviteRole, EventInviteRole, EventInviteStatus } from '../../db/schema.js';
import { libravatarUrl } from '../users/avatar.js';
import { PUBLIC_PROFILE_FIELDS, toPublicProfile, type PublicUserProfile } from '../users/user.js';

export type Invitee = components['schemas']['Invitee'];

export interface InviteePage {
  items: Invitee[];
  /** All invitees of the event, registered and e-mail. */
  total: number;
}

export interface InviteeWindow {
  limit: number;
  offset: number;
  /**
   * Base of the Libravatar URL shown for e-mail invitees (`[users] avatar_base_url`); they have no
   * profile of their own. Defaults to the configuration's default.
   */
  avatarBaseUrl?: string;
}

const DEFAULT_AVATAR_BASE_URL = 'https://seccdn.libravatar.org/avatar/';

type RegisteredRow = PublicUserProfile & { event_id: string; role: EventInviteRole; status: EventInviteStatus };

interface EmailRow {
  event_id: string;
  email: string;
  role: EmailInviteRole;
}

/** One page of an event's invitees. */
export async function listInvitees(db: Kysely<DB>, eventId: string, window: InviteeWindow): Promise<InviteePage> {
  const { limit, offset } = window;
  const avatarBase = window.avatarBaseUrl ?? DEFAULT_AVATAR_BASE_URL;
  const counts = await countInvitees(db, [eventId]);
  const { registered, email } = counts.get(eventId) ?? { registered: 0, email: 0 };
  const total = registered + email;
  if (limit <= 0 || offset >= total) return { items: [], total };

  const registeredRows =
    offset < registered
      ? await registeredQuery(db, [eventId])
          .limit(limit)
          .offset(offset)
          .execute()
      : [];
  const remaining = limit - registeredRows.length;
  const emailRows =
    remaining > 0
      ? await emailQuery(db, [eventId])
          .limit(remaining)
          .offset(Math.max(0, offset - registered))
          .execute()
      : [];
  return {
    items: [...registeredRows.map(toRegisteredInvitee), ...emailRows.map((row) => toEmailInvitee(row, avatarBase))],
    total,
  };
}

/**
 * The first `limitPerEvent` invitees of each event, in the order of `listInvitees`, with totals, in
 * four queries whatever the number of events. Every requested event has an entry (empty when unknown).
 */
export async function inviteesOf(
  db: Kysely<DB>,
  eventIds: readonly string[],
  limitPerEvent: number,
  options: { avatarBaseUrl?: string } = {},
): Promise<Map<string, InviteePage>> {
  const ids = [...new Set(eventIds)];
  const counts = ids.length > 0 ? await countInvitees(db, ids) : new Map<string, { registered: number; email: number }>();
  const firsts = await firstInviteesOf(db, ids, limitPerEvent, options);
  return new Map(
    ids.map((id) => {
      const { registered = 0, email = 0 } = counts.get(id) ?? {};
      return [id, { items: firsts.get(id) ?? [], total: registered + email }];
    }),
  );
}

/**
 * `inviteesOf` without the totals, in two queries: for event answers, whose rows count their
 * invitees already (`invitee_count` of the view). Events without invitees have no entry.
 */
export async function firstInviteesOf(
  db: Kysely<DB>,
  eventIds: readonly string[],
  limitPerEvent: number,
  options: { avatarBaseUrl?: string } = {},
): Promise<Map<string, Invitee[]>> {
  const result = new Map<string, Invitee[]>();
  const ids = [...new Set(eventIds)];
  if (ids.length === 0 || limitPerEvent <= 0) return result;
  const avatarBase = options.avatarBaseUrl ?? DEFAULT_AVATAR_BASE_URL;
  const add = (eventId: string, invitee: Invitee) => {
    const list = result.get(eventId) ?? result.set(eventId, []).get(eventId)!;
    if (list.length < limitPerEvent) list.push(invitee);
  };
  // One query after another, so that a transaction (one connection; on PGlite one session) may be passed as db.
  const registeredRows = await firstPerEvent(db, registeredQuery(db, ids), REGISTERED_ORDER, limitPerEvent);
  const emailRows = await firstPerEvent(db, emailQuery(db, ids), EMAIL_ORDER, limitPerEvent);
  for (const row of registeredRows) add(row.event_id, toRegisteredInvitee(row));
  for (const row of emailRows) add(row.event_id, toEmailInvitee(row, avatarBase));
  return result;
}

async function countInvitees(db: Kysely<DB>, eventIds: string[]): Promise<Map<string, { registered: number; email: number }>> {
  const counts = new Map<string, { registered: number; email: number }>();
  const entry = (id: string) => counts.get(id) ?? counts.set(id, { registered: 0, email: 0 }).get(id)!;
  for (const [table, kind] of [['event_invites', 'registered'], ['event_email_invites', 'email']] as const) {
    const rows = await db
      .selectFrom(table)
      .where('event_id', 'in', eventIds)
      .groupBy('event_id')
      .select((eb) => ['event_id', eb.fn.countAll<number>().as('count')])
      .execute();
    for (const row of rows) entry(row.event_id)[kind] = Number(row.count);
  }
  return counts;
}

/** Each list's order (oldest invite first), as SQL for the ORDER BY and for the per-event window. */
const REGISTERED_ORDER = sql`event_invites.created_at, event_invites.invitee`;
const EMAIL_ORDER = sql`event_email_invites.created_at, event_email_invites.email`;

function registeredQuery(db: Kysely<DB>, eventIds: string[]) {
  return db
    .selectFrom('event_invites')
    .innerJoin('users', 'users.id', 'event_invites.invitee')
    .where('event_invites.event_id', 'in', eventIds)
    .select(['event_invites.event_id', 'event_invites.role', 'event_invites.status'])
    .select(PUBLIC_PROFILE_FIELDS.map((field) => `users.${field}` as const))
    .orderBy(REGISTERED_ORDER);
}

function emailQuery(db: Kysely<DB>, eventIds: string[]) {
  return db
    .selectFrom('event_email_invites')
    .where('event_email_invites.event_id', 'in', eventIds)
    .select(['event_email_invites.event_id', 'event_email_invites.email', 'event_email_invites.role'])
    .orderBy(EMAIL_ORDER);
}

/** The first `limit` rows of each event in `list`, by a window function over the list's order. */
async function firstPerEvent<Row extends { event_id: string }>(
  db: Kysely<DB>,
  list: SelectQueryBuilder<DB, keyof DB, Row>,
  order: RawBuilder<unknown>,
  limit: number,
): Promise<Row[]> {
  // `ranked` compiles to a parenthesised subquery
  const ranked = list.select(sql<string>`row_number() over (partition by event_id order by ${order})`.as('position'));
  const { rows } = await sql<Row>`select * from ${ranked} as ranked where position <= ${limit} order by event_id, position`.execute(db);
  return rows;
}

function toRegisteredInvitee(row: RegisteredRow): Invitee {
  return { profile: { kind: 'registered', ...toPublicProfile(row), role: row.role }, status: row.status };
}

/** E-mail invitees have no answer yet; a `guest` address shows as `user` (the role it gets on registering). */
function toEmailInvitee(row: EmailRow, avatarBase: string): Invitee {
  return {
    profile: {
      kind: 'email',
      email: row.email,
      avatar_url: libravatarUrl(avatarBase, row.email),
      role: row.role === 'moderator' ? 'moderator' : 'user',
    },
    status: 'pending',
  };
}
