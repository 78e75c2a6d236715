/**
 * The SQL of event notifications: what a mail says about its event (read inside the change's
 * transaction), the `email_outbox` rows queued with the change, and the worker's claims on them.
 */
import type { Db, EmailOutboxRow, NewEmailOutboxRow } from '../../db/schema.js';

/** The event, its people, room, invitees and exceptions, as a mail describes them; undefined when the event is gone. */
export async function readSnapshotRows(trx: Db, eventId: string, actorId: string) {
  const event = await trx.selectFrom('events').selectAll().where('id', '=', eventId).executeTakeFirst();
  if (!event) return undefined;
  // one query after another: a transaction is one connection (and PGlite one session)
  const people = await trx.selectFrom('users').select(['id', 'email', 'display_name']).where('id', 'in', [event.created_by, actorId]).execute();
  const room = await trx
    .selectFrom('rooms')
    .leftJoin('sip_configs', 'sip_configs.room_id', 'rooms.id')
    .select(['rooms.password', 'sip_configs.sip_id', 'sip_configs.password as sip_pin'])
    .where('rooms.id', '=', event.room_id)
    .executeTakeFirst();
  const registered = await trx
    .selectFrom('event_invites')
    .innerJoin('users', 'users.id', 'event_invites.invitee')
    .select(['users.email', 'users.display_name', 'event_invites.role', 'event_invites.status'])
    .where('event_invites.event_id', '=', eventId)
    .orderBy('event_invites.created_at')
    .execute();
  const byEmail = await trx
    .selectFrom('event_email_invites')
    .select(['email', 'role', 'room_invite_code'])
    .where('event_id', '=', eventId)
    .orderBy('created_at')
    .execute();
  const exceptions = await trx.selectFrom('event_exceptions').selectAll().where('event_id', '=', eventId).orderBy('instance_start').execute();
  return { event, people, room, registered, byEmail, exceptions };
}

/** Raises the event's iCalendar SEQUENCE by one; answers the new value. */
export async function bumpIcalSequence(trx: Db, eventId: string): Promise<number> {
  const bumped = await trx
    .updateTable('events')
    .set((eb) => ({ ical_sequence: eb('ical_sequence', '+', 1) }))
    .where('id', '=', eventId)
    .returning('ical_sequence')
    .executeTakeFirstOrThrow();
  return bumped.ical_sequence;
}

export async function insertMails(trx: Db, rows: NewEmailOutboxRow[]): Promise<void> {
  await trx.insertInto('email_outbox').values(rows).execute();
}

/** How many mails the outbox holds that were not sent yet (due now or waiting for a later attempt). */
export async function pendingMailCount(db: Db): Promise<number> {
  const { count } = await db
    .selectFrom('email_outbox')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('sent_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(count);
}

/**
 * Moves a due row's `next_attempt_at` to `leaseUntil` and answers it, choosing the row with
 * `FOR UPDATE SKIP LOCKED` (no two instances claim the same row); undefined when none is due at `at`.
 */
export async function claimDueMail(db: Db, at: Date, leaseUntil: Date): Promise<EmailOutboxRow | undefined> {
  return db
    .updateTable('email_outbox')
    .set({ next_attempt_at: leaseUntil })
    .where('id', '=', (eb) =>
      eb
        .selectFrom('email_outbox')
        .select('id')
        .where('sent_at', 'is', null)
        .where('next_attempt_at', '<=', at)
        .orderBy('next_attempt_at')
        .orderBy('id')
        .limit(1)
        .forUpdate()
        .skipLocked(),
    )
    .returningAll()
    .executeTakeFirst();
}

export async function markMailSent(db: Db, id: number, at: Date): Promise<void> {
  await db.updateTable('email_outbox').set({ sent_at: at, last_error: null }).where('id', '=', id).execute();
}

export async function markMailFailed(db: Db, id: number, failure: { attempts: number; last_error: string; next_attempt_at: Date }): Promise<void> {
  await db.updateTable('email_outbox').set(failure).where('id', '=', id).execute();
}
