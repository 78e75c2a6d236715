/**
 * The invitee view of events (the contract Invitee): registered invitees first (oldest invite
 * first), then e-mail invitees (oldest first). Used by the invite list and by event answers
 * (`invitees` / `invitees_truncated`), the latter batched for a page of events.
 */
import type { components } from '../../../generated/openapi.js';
import type { Db } from '../../db/schema.js';
import { libravatarUrl } from '../users/avatar.js';
import { toPublicProfile } from '../users/user.js';
import {
  countInvitees,
  firstEmailInviteesOf,
  firstRegisteredInviteesOf,
  pageOfEmailInvitees,
  pageOfRegisteredInvitees,
  type EmailInviteeRow,
  type RegisteredInviteeRow,
} from './event-invites.repository.js';

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

/** One page of an event's invitees. */
export async function listInvitees(db: Db, eventId: string, window: InviteeWindow): Promise<InviteePage> {
  const { limit, offset } = window;
  const avatarBase = window.avatarBaseUrl ?? DEFAULT_AVATAR_BASE_URL;
  const counts = await countInvitees(db, [eventId]);
  const { registered, email } = counts.get(eventId) ?? { registered: 0, email: 0 };
  const total = registered + email;
  if (limit <= 0 || offset >= total) return { items: [], total };

  const registeredRows = offset < registered ? await pageOfRegisteredInvitees(db, eventId, limit, offset) : [];
  const remaining = limit - registeredRows.length;
  const emailRows = remaining > 0 ? await pageOfEmailInvitees(db, eventId, remaining, Math.max(0, offset - registered)) : [];
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
  db: Db,
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
  db: Db,
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
  const registeredRows = await firstRegisteredInviteesOf(db, ids, limitPerEvent);
  const emailRows = await firstEmailInviteesOf(db, ids, limitPerEvent);
  for (const row of registeredRows) add(row.event_id, toRegisteredInvitee(row));
  for (const row of emailRows) add(row.event_id, toEmailInvitee(row, avatarBase));
  return result;
}

function toRegisteredInvitee(row: RegisteredInviteeRow): Invitee {
  return { profile: { kind: 'registered', ...toPublicProfile(row), role: row.role }, status: row.status };
}

/** E-mail invitees have no answer yet; a `guest` address shows as `user` (the role it gets on registering). */
function toEmailInvitee(row: EmailInviteeRow, avatarBase: string): Invitee {
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
