/**
 * How a participant looks to the others (the contract's Participant): its control data, built from
 * its session, and the peer data of every module the room's tariff enables, each under its
 * namespace. Used for `join_success`'s list, `joined`, `update` and the waiting room.
 */
import type { ParticipantControl } from '../../../../generated/signaling/types.js';
import type { RoomContext } from '../../room-context.js';
import type { Session } from '../../session.js';
import type { ModuleDeps, SignalingModule } from '../module.js';
import type { MemberRecord } from './membership-store.js';

/** A Participant: `{id, control, <namespace>: peer data …}`. */
export type ParticipantView = MemberRecord & Record<string, unknown>;

/** The session's control data, once `join` has set its display name and join time. */
function participantControl(session: Session): ParticipantControl {
  const { displayName, joinedAt } = session;
  if (displayName === undefined || joinedAt === undefined) throw new Error('a participant has control data only after join');
  return {
    display_name: displayName,
    role: session.role,
    ...(session.avatarUrl !== undefined ? { avatar_url: session.avatarUrl } : {}),
    participation_kind: session.participant.kind,
    hand_is_up: false,
    joined_at: joinedAt,
    left_at: null,
    hand_updated_at: joinedAt,
    is_room_owner: session.participant.isRoomOwner,
  };
}

export const memberRecord = (session: Session): MemberRecord => ({ id: session.participant.id, control: participantControl(session) });

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
