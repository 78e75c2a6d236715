/**
 * A participant's record as the room state keeps it and as the others see it without the modules'
 * peer data: its control data, built from its session (its hand and role as they are now). Used
 * for the membership and the waiting room, by the control and moderation modules alike.
 */
import type { ParticipantControl } from '../../../generated/signaling/types.js';
import type { Session } from '../session.js';
import type { Member, MemberRecord } from './membership-store.js';

/** What a participant's own changes touch (its session fields of the same names). */
export type ControlChange = Partial<Pick<Session, 'role' | 'handIsUp' | 'handUpdatedAt' | 'displayName'>>;

/** The session's control data (with `change` made), once `join` has set its display name and join time. */
function participantControl(session: Session, change: ControlChange): ParticipantControl {
  const { joinedAt } = session;
  const { role, handIsUp, handUpdatedAt, displayName } = {
    role: session.role,
    handIsUp: session.handIsUp,
    handUpdatedAt: session.handUpdatedAt,
    displayName: session.displayName,
    ...change,
  };
  if (displayName === undefined || joinedAt === undefined) throw new Error('a participant has control data only after join');
  return {
    display_name: displayName,
    role,
    ...(session.avatarUrl !== undefined ? { avatar_url: session.avatarUrl } : {}),
    participation_kind: session.participant.kind,
    hand_is_up: handIsUp ?? false,
    joined_at: joinedAt,
    left_at: null,
    hand_updated_at: handUpdatedAt ?? joinedAt,
    is_room_owner: session.participant.isRoomOwner,
  };
}

export const memberRecord = (session: Session, change: ControlChange = {}): MemberRecord => ({
  id: session.participant.id,
  control: participantControl(session, change),
});

/** The session as the membership store keeps it: its record (with `change` made) and a registered user's id or a guest's code. */
export function memberOf(session: Session, change: ControlChange = {}): Member {
  const { who } = session.participant;
  const record = memberRecord(session, change);
  if (who.kind === 'user') return { record, userId: who.userId };
  if (who.kind === 'guest') return { record, inviteCode: who.inviteCode };
  return { record };
}

/**
 * Oldest first, then by id. Compared as text, not by locale: join times are RFC 3339 in UTC as
 * toISOString writes them and ids are UUIDs, fixed formats whose text order is their order (and
 * the same as localeCompare's), at a fraction of the cost (a join sorts the whole room).
 */
export const joinOrder = (a: MemberRecord, b: MemberRecord): number => textOrder(a.control.joined_at, b.control.joined_at) || textOrder(a.id, b.id);

const textOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Oldest first, so every participant sees the list in the same order. */
export function byJoinTime(records: MemberRecord[]): MemberRecord[] {
  return records.sort(joinOrder);
}
