/**
 * Everything an event mail says about its event, read inside the transaction of the change (so a
 * cancellation reads the event before it is deleted, and an update reads the new state).
 */
import type { Db, EmailInviteRole, EventExceptionRow, EventInviteRole, EventInviteStatus, EventRow } from '../../db/schema.js';
import { readSnapshotRows } from './notifications.repository.js';

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

export async function readEventSnapshot(trx: Db, eventId: string, actorId: string): Promise<EventSnapshot | undefined> {
  const rows = await readSnapshotRows(trx, eventId, actorId);
  if (!rows) return undefined;
  const { event, people, room, registered, byEmail, exceptions } = rows;
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
