/**
 * Everything an event mail says about its event, read inside the transaction of the change (so a
 * cancellation reads the event before it is deleted, and an update reads the new state).
 */
import type { Kysely } from 'kysely';
import type { DB, EmailInviteRole, EventExceptionRow, EventInviteRole, EventInviteStatus, EventRow } from '../../db/schema.js';

export interface SnapshotPerson {
  email: string;
  name: string;
}

export interface SnapshotInvitee extends SnapshotPerson {
  role: EventInviteRole | EmailInviteRole;
  status: EventInviteStatus;
  /** Only e-mail invitees (not registered): the room invite code that lets them in. */
  roomInviteCode: string | null;
}

export interface EventSnapshot {
  event: EventRow;
  creator: SnapshotPerson;
  actor: SnapshotPerson;
  roomPassword: string | null;
  sip: { sipId: string; pin: string } | null;
  invitees: SnapshotInvitee[];
  exceptions: EventExceptionRow[];
}

export async function readEventSnapshot(trx: Kysely<DB>, eventId: string, actorId: string): Promise<EventSnapshot | undefined> {
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
  const person = (id: string): SnapshotPerson => {
    const user = people.find((p) => p.id === id);
    return user ? { email: user.email, name: user.display_name } : { email: '', name: '' };
  };
  return {
    event,
    creator: person(event.created_by),
    actor: person(actorId),
    roomPassword: room?.password ?? null,
    sip: room?.sip_id != null && room.sip_pin != null ? { sipId: room.sip_id, pin: room.sip_pin } : null,
    invitees: [
      ...registered.map((r) => ({ email: r.email, name: r.display_name, role: r.role, status: r.status, roomInviteCode: null })),
      // e-mail invitees have not answered anything: always pending (as the reference controller does)
      ...byEmail.map((e) => ({ email: e.email, name: '', role: e.role, status: 'pending' as const, roomInviteCode: e.room_invite_code })),
    ],
    exceptions,
  };
}
