/**
 * Invitations to events (the contract Event invites, docs/architecture.md §5, docs/decisions.md): the creator invites
 * registered users or e-mail addresses, changes roles and withdraws invitations; invitees answer
 * theirs. Every change and the e-mail it announces commit together (`queueEventNotification` in the
 * same transaction). No access is 404: reading needs the creator or an invitee, changing the creator.
 */
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';

import type { Config } from '../../config/schema.js';
import type { DB, EventInviteRole, EventInviteStatus, EventRow } from '../../db/schema.js';
import { errors } from '../../errors.js';
import { queueEventNotification } from '../notifications/outbox.js';
import { queueInviteAnswerWebhook } from '../webhooks/domain-events.js';
import { notBannedFrom } from '../rooms/room-bans.js';
import { requireEventAccess, requireEventCreator } from './event-access.js';
import { listInvitees, type InviteePage } from './invitees.js';

/** Whom to invite: a registered user by id, or an address (a registered user's, or an external one). */
export type InviteTarget = { invitee: string } | { email: string };

export interface InviteOptions {
  role: EventInviteRole;
  /** `suppress_email_notification`: change without queueing the e-mail. */
  suppress: boolean;
}

export interface EventInviteService {
  /** 'created' for a new invitation; 'unchanged' when already invited or the target is the creator. */
  invite(callerId: string, eventId: string, target: InviteTarget, options: InviteOptions): Promise<'created' | 'unchanged'>;
  list(callerId: string, eventId: string, page: { page: number; per_page: number }): Promise<InviteePage>;
  changeRole(callerId: string, eventId: string, userId: string, role: EventInviteRole): Promise<void>;
  uninvite(callerId: string, eventId: string, userId: string, options: { suppress: boolean }): Promise<void>;
  uninviteEmail(callerId: string, eventId: string, email: string, options: { suppress: boolean }): Promise<void>;
  /** The caller's own answer to their invitation; 404 when they have none. */
  answer(callerId: string, eventId: string, status: 'accepted' | 'declined'): Promise<void>;
}

export interface EventInviteServiceDeps {
  db: Kysely<DB>;
  config: Config;
}

export function createEventInviteService({ db, config }: EventInviteServiceDeps): EventInviteService {
  // The actor is the event's creator: only they change invitations.
  const notify = (trx: Kysely<DB>, kind: 'invited' | 'uninvited', event: EventRow, recipients: string[], suppress: boolean) =>
    recipients.length === 0
      ? Promise.resolve()
      : queueEventNotification(trx, { kind, eventId: event.id, actorId: event.created_by, recipients, suppress, config });

  return {
    invite(callerId, eventId, target, { role, suppress }) {
      return db.transaction().execute(async (trx) => {
        const event = await requireEventCreator(trx, callerId, eventId);
        if ('invitee' in target) {
          const user = await trx.selectFrom('users').select(['id', 'email']).where('id', '=', target.invitee).executeTakeFirst();
          if (!user) throw errors.notFound('No user with this id');
          const invited = await inviteUsers(trx, event, [user], role);
          await notify(trx, 'invited', event, invited, suppress);
          return invited.length > 0 ? 'created' : 'unchanged';
        }

        const email = target.email.toLowerCase();
        const registered = await usersWithEmail(trx, email);
        if (registered.length > 0) {
          // Usually one; should an IdP give two subjects the same address, both are that person.
          const invited = await inviteUsers(trx, event, registered, role);
          await notify(trx, 'invited', event, invited, suppress);
          return invited.length > 0 ? 'created' : 'unchanged';
        }
        if (!config.endpoints.event_invite_external_email_address) {
          throw errors.unknownEmail();
        }
        const created = await inviteExternalAddress(trx, event, email, role, callerId);
        if (created) await notify(trx, 'invited', event, [email], suppress);
        return created ? 'created' : 'unchanged';
      });
    },

    async list(callerId, eventId, { page, per_page }) {
      await requireEventAccess(db, callerId, eventId);
      return listInvitees(db, eventId, {
        limit: per_page,
        offset: (page - 1) * per_page,
        avatarBaseUrl: config.users.avatar_base_url,
      });
    },

    async changeRole(callerId, eventId, userId, role) {
      await db.transaction().execute(async (trx) => {
        await requireEventCreator(trx, callerId, eventId);
        await updateInvite(trx, eventId, userId, { role }, 'This user is not invited');
      });
    },

    async uninvite(callerId, eventId, userId, { suppress }) {
      await db.transaction().execute(async (trx) => {
        const event = await requireEventCreator(trx, callerId, eventId);
        const removed = await removeUserInvites(trx, eventId, [userId]);
        if (removed.length === 0) throw errors.notFound('This user is not invited');
        await notify(trx, 'uninvited', event, removed, suppress);
      });
    },

    async uninviteEmail(callerId, eventId, rawEmail, { suppress }) {
      const email = rawEmail.toLowerCase();
      await db.transaction().execute(async (trx) => {
        const event = await requireEventCreator(trx, callerId, eventId);
        const removedAddresses = await removeEmailInvites(trx, eventId, email, callerId);
        const users = await usersWithEmail(trx, email);
        const removedUsers = await removeUserInvites(trx, eventId, users.map((user) => user.id));
        if (removedAddresses.length === 0 && removedUsers.length === 0) {
          throw errors.notFound('Nobody is invited under this address');
        }
        await notify(trx, 'uninvited', event, [...new Set([...removedAddresses, ...removedUsers])], suppress);
      });
    },

    async answer(callerId, eventId, status) {
      await db.transaction().execute(async (trx) => {
        const before = await trx
          .selectFrom('event_invites')
          .innerJoin('events', 'events.id', 'event_invites.event_id')
          .select(['event_invites.status', 'events.room_id', 'events.created_by'])
          .where('event_invites.event_id', '=', eventId)
          .where('event_invites.invitee', '=', callerId)
          .executeTakeFirst();
        await updateInvite(trx, eventId, callerId, { status }, 'You are not invited to this event', { unlessBanned: true });
        // an answer repeated changes nothing and is not reported again
        if (before && before.status !== status) await queueInviteAnswerWebhook(trx, status, { id: eventId, ...before }, callerId);
      });
    },
  };
}

/**
 * Changes the user's invitation to the event; 404 with `missing` when there is none, or with
 * `unlessBanned` (the invitee answering) when the user is banned from the event's room.
 */
async function updateInvite(
  db: Kysely<DB>,
  eventId: string,
  userId: string,
  changes: { role?: EventInviteRole; status?: EventInviteStatus },
  missing: string,
  { unlessBanned = false } = {},
): Promise<void> {
  let update = db.updateTable('event_invites').set(changes).where('event_id', '=', eventId).where('invitee', '=', userId);
  if (unlessBanned) update = update.where(notBannedFrom(sql`(select events.room_id from events where events.id = event_invites.event_id)`, userId));
  const updated = await update.executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0) throw errors.notFound(missing);
}

/** Registered users whose address is `email` (lower-case); addresses are compared case-insensitively. */
function usersWithEmail(trx: Kysely<DB>, email: string) {
  return trx
    .selectFrom('users')
    .select(['id', 'email'])
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email))
    .orderBy('created_at')
    .execute();
}

/** Invites the users who are neither the creator nor invited already; answers the addresses of the newly invited. */
async function inviteUsers(
  trx: Kysely<DB>,
  event: EventRow,
  users: { id: string; email: string }[],
  role: EventInviteRole,
): Promise<string[]> {
  const candidates = users.filter((user) => user.id !== event.created_by);
  if (candidates.length === 0) return [];
  const inserted = await trx
    .insertInto('event_invites')
    .values(candidates.map((user) => ({ event_id: event.id, invitee: user.id, role, created_by: event.created_by })))
    .onConflict((conflict) => conflict.columns(['event_id', 'invitee']).doNothing())
    .returning('invitee')
    .execute();
  const newly = new Set(inserted.map((row) => row.invitee));
  return candidates.filter((user) => newly.has(user.id)).map((user) => user.email);
}

/**
 * Invites an address no registered user has, with a room invite code (no expiry) that lets them
 * join as a guest until they register. The invite row goes in first, so that of two concurrent
 * requests only the one that inserted it creates a code.
 */
async function inviteExternalAddress(
  trx: Kysely<DB>,
  event: EventRow,
  email: string,
  role: EventInviteRole,
  callerId: string,
): Promise<boolean> {
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
  await trx
    .updateTable('event_email_invites')
    .set({ room_invite_code: code })
    .where('event_id', '=', event.id)
    .where('email', '=', email)
    .execute();
  return true;
}

/**
 * Removes the users' invitations and their favorites of the event (their access to the event and
 * its room follows from the invitation, so it ends too); answers the addresses of the uninvited.
 */
async function removeUserInvites(trx: Kysely<DB>, eventId: string, userIds: string[]): Promise<string[]> {
  if (userIds.length === 0) return [];
  const removed = await trx
    .deleteFrom('event_invites')
    .where('event_id', '=', eventId)
    .where('invitee', 'in', userIds)
    .returning('invitee')
    .execute();
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
async function removeEmailInvites(trx: Kysely<DB>, eventId: string, email: string, callerId: string): Promise<string[]> {
  const removed = await trx
    .deleteFrom('event_email_invites')
    .where('event_id', '=', eventId)
    .where('email', '=', email)
    .returning(['email', 'room_invite_code'])
    .execute();
  const codes = removed.flatMap((row) => (row.room_invite_code ? [row.room_invite_code] : []));
  if (codes.length > 0) {
    await trx
      .updateTable('room_invites')
      .set({ active: false, updated_by: callerId, updated_at: new Date() })
      .where('code', 'in', codes)
      .execute();
  }
  return removed.map((row) => row.email);
}
