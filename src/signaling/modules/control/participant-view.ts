/**
 * How a participant looks to the others (the contract's Participant): its control data, built from
 * its session (its hand and role as they are now), and the peer data of every module the room's
 * tariff enables, each under its namespace. Used for `join_success`'s list, `joined`, `update` and
 * the waiting room, and for what the membership store keeps of it.
 */
import type { ParticipantControl } from '../../../../generated/signaling/types.js';
import type { RoomContext } from '../../room-context.js';
import type { Session } from '../../session.js';
import type { ModuleDeps, SignalingModule } from '../module.js';
import type { Member, MemberRecord } from './membership-store.js';

/** A Participant: `{id, control, <namespace>: peer data …}`. */
export type ParticipantView = MemberRecord & Record<string, unknown>;

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

/** Oldest first, so every participant sees the list in the same order. */
export function byJoinTime(records: MemberRecord[]): MemberRecord[] {
  return records.sort((a, b) => a.control.joined_at.localeCompare(b.control.joined_at) || a.id.localeCompare(b.id));
}

/** The modules the room's tariff enables, other than control (which asks them). */
export function roomModules(deps: Pick<ModuleDeps, 'modules'>, room: RoomContext): SignalingModule[] {
  const enabled = new Set(room.tariff.enabled_modules);
  return [...deps.modules().values()].filter((module) => module.namespace !== 'control' && enabled.has(module.namespace));
}

/** The records with every room module's peer data of each participant added. */
export async function withPeerData(modules: SignalingModule[], roomId: string, records: MemberRecord[]): Promise<ParticipantView[]> {
  const ids = records.map((record) => record.id);
  const byModule = await Promise.all(
    modules.map(async (module) => [module.namespace, module.peerData ? await module.peerData(roomId, ids) : undefined] as const),
  );
  return records.map((record) => {
    const view: ParticipantView = { ...record };
    for (const [namespace, data] of byModule) {
      const peer = data?.get(record.id);
      if (peer !== undefined) view[namespace] = peer;
    }
    return view;
  });
}

/** One participant's view. */
export async function viewOf(modules: SignalingModule[], roomId: string, record: MemberRecord): Promise<ParticipantView> {
  const [view] = await withPeerData(modules, roomId, [record]);
  return view!;
}
