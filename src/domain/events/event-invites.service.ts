/**
 * Invitations to events (the contract Event invites, docs/architecture.md §5, docs/decisions.md): the creator invites
 * registered users or e-mail addresses, changes roles and withdraws invitations; invitees answer
 * theirs. Every change and the e-mail it announces commit together (`queueEventNotification` in the
 * same transaction). No access is 404: reading needs the creator or an invitee, changing the creator.
 */
import type { Config } from '../../config/schema.js';
import type { Db, EventInviteRole, EventInviteStatus, EventRow } from '../../db/schema.js';
import { errors } from '../../errors.js';
import { queueEventNotification } from '../notifications/outbox.js';
import { queueInviteAnswerWebhook } from '../webhooks/domain-events.js';
import { findContactById, findContactsByEmail } from '../users/users.repository.js';
import { requireEventAccess, requireEventCreator } from './event-access.js';
import * as repository from './event-invites.repository.js';
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
  db: Db;
  config: Config;
}

export function createEventInviteService({ db, config }: EventInviteServiceDeps): EventInviteService {
  // The actor is the event's creator: only they change invitations.
  const notify = (trx: Db, kind: 'invited' | 'uninvited', event: EventRow, recipients: string[], suppress: boolean) =>
    recipients.length === 0
      ? Promise.resolve()
      : queueEventNotification(trx, { kind, eventId: event.id, actorId: event.created_by, recipients, suppress, config });

  return {
    invite(callerId, eventId, target, { role, suppress }) {
      return db.transaction().execute(async (trx) => {
        const event = await requireEventCreator(trx, callerId, eventId);
        if ('invitee' in target) {
          const user = await findContactById(trx, target.invitee);
          if (!user) throw errors.notFound('No user with this id');
          const invited = await inviteUsers(trx, event, [user], role);
          await notify(trx, 'invited', event, invited, suppress);
          return invited.length > 0 ? 'created' : 'unchanged';
        }

        const email = target.email.toLowerCase();
        const registered = await findContactsByEmail(trx, email);
        if (registered.length > 0) {
          // Usually one; should an IdP give two subjects the same address, both are that person.
          const invited = await inviteUsers(trx, event, registered, role);
          await notify(trx, 'invited', event, invited, suppress);
          return invited.length > 0 ? 'created' : 'unchanged';
        }
        if (!config.endpoints.event_invite_external_email_address) {
          throw errors.unknownEmail();
        }
        const created = await repository.insertEmailInvite(trx, event, email, role, callerId);
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
        const removed = await repository.deleteUserInvites(trx, eventId, [userId]);
        if (removed.length === 0) throw errors.notFound('This user is not invited');
        await notify(trx, 'uninvited', event, removed, suppress);
      });
    },

    async uninviteEmail(callerId, eventId, rawEmail, { suppress }) {
      const email = rawEmail.toLowerCase();
      await db.transaction().execute(async (trx) => {
        const event = await requireEventCreator(trx, callerId, eventId);
        const removedAddresses = await repository.deleteEmailInvites(trx, eventId, email, callerId);
        const users = await findContactsByEmail(trx, email);
        const removedUsers = await repository.deleteUserInvites(
          trx,
          eventId,
          users.map((user) => user.id),
        );
        if (removedAddresses.length === 0 && removedUsers.length === 0) {
          throw errors.notFound('Nobody is invited under this address');
        }
        await notify(trx, 'uninvited', event, [...new Set([...removedAddresses, ...removedUsers])], suppress);
      });
    },

    async answer(callerId, eventId, status) {
      await db.transaction().execute(async (trx) => {
        const before = await repository.findInviteWithEvent(trx, eventId, callerId);
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
  db: Db,
  eventId: string,
  userId: string,
  changes: { role?: EventInviteRole; status?: EventInviteStatus },
  missing: string,
  { unlessBanned = false } = {},
): Promise<void> {
  const updated = await repository.updateInvite(db, eventId, userId, changes, { unlessBanned });
  if (Number(updated.numUpdatedRows) === 0) throw errors.notFound(missing);
}

/** Invites the users who are neither the creator nor invited already; answers the addresses of the newly invited. */
async function inviteUsers(trx: Db, event: EventRow, users: { id: string; email: string }[], role: EventInviteRole): Promise<string[]> {
  const candidates = users.filter((user) => user.id !== event.created_by);
  if (candidates.length === 0) return [];
  const newly = new Set(
    await repository.insertUserInvites(
      trx,
      event,
      candidates.map((user) => user.id),
      role,
    ),
  );
  return candidates.filter((user) => newly.has(user.id)).map((user) => user.email);
}
