/**
 * How a participant looks to the others (the contract's Participant): its record (room-state/
 * member-records.ts) and the peer data of every module the room's tariff enables, each under its
 * namespace. Used for `join_success`'s list, `joined` and `update`.
 */
import type { RoomContext } from '../../room-context.js';
import type { ModuleDeps, SignalingModule } from '../module.js';
import type { MemberRecord } from '../../room-state/membership-store.js';

/** A Participant: `{id, control, <namespace>: peer data …}`. */
export type ParticipantView = MemberRecord & Record<string, unknown>;

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
