/**
 * How a participant looks to the others (the contract's Participant): its record (room-state/
 * member-records.ts) and the peer data of every module the room's tariff enables, each under its
 * namespace. Used for `join_success`'s list, `joined` and `update`.
 *
 * A `join_success` lists the whole room, so filling a room of n costs n²/2 participants written
 * out; each record's JSON is therefore written once and kept by the record (the membership store
 * hands out the same frozen record while it is unchanged), and a list's JSON is put together from
 * those (`listJson`).
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

/**
 * The records with every room module's peer data of each participant added (a record without any
 * is its own view: views are not to be changed).
 */
export async function withPeerData(modules: SignalingModule[], roomId: string, records: MemberRecord[]): Promise<ParticipantView[]> {
  const ids = records.map((record) => record.id);
  const byModule = await Promise.all(
    modules.map(async (module) => [module.namespace, module.peerData ? await module.peerData(roomId, ids) : undefined] as const),
  );
  const withData = byModule.filter((entry): entry is readonly [string, ReadonlyMap<string, unknown>] => entry[1] !== undefined && entry[1].size > 0);
  return records.map((record) => {
    let view: ParticipantView | undefined;
    for (const [namespace, data] of withData) {
      const peer = data.get(record.id);
      if (peer !== undefined) (view ??= { ...record })[namespace] = peer;
    }
    return view ?? record;
  });
}

/** One participant's view. */
export async function viewOf(modules: SignalingModule[], roomId: string, record: MemberRecord): Promise<ParticipantView> {
  const [view] = await withPeerData(modules, roomId, [record]);
  return view!;
}

/** The JSON of frozen records, by record (a changed member is a new record). */
const recordJson = new WeakMap<MemberRecord, string>();

function jsonOfRecord(record: MemberRecord): string {
  const kept = recordJson.get(record);
  if (kept !== undefined) return kept;
  const json = JSON.stringify(record);
  if (Object.isFrozen(record) && Object.isFrozen(record.control)) recordJson.set(record, json);
  return json;
}

/**
 * `JSON.stringify(views)` for the views `withPeerData` made of `records` (in the same order), from
 * each record's kept JSON: a view is its record's fields, then its peer data in module order.
 */
export function listJson(records: readonly MemberRecord[], views: readonly ParticipantView[]): string {
  const parts = records.map((record, index) => {
    const json = jsonOfRecord(record);
    const view = views[index]!;
    if (view === record) return json;
    let peers = '';
    for (const [key, value] of Object.entries(view)) if (!(key in record)) peers += `,${JSON.stringify(key)}:${JSON.stringify(value)}`;
    return `${json.slice(0, -1)}${peers}}`;
  });
  return `[${parts.join(',')}]`;
}
