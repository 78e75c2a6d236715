/** The in-process membership store: one instance only (without Redis). */
import type { Member, MemberRecord, MembershipStore } from './membership-store.js';

interface LocalRoom {
  members: Map<string, Member>;
  startedAtMs: number;
}

export function createLocalMembershipStore(): MembershipStore {
  // a room is here while it has members, so an empty room leaves nothing behind
  const rooms = new Map<string, LocalRoom>();
  return {
    async join(roomId, member, limit, nowMs) {
      const room = rooms.get(roomId) ?? { members: new Map(), startedAtMs: nowMs };
      const { id } = member.record;
      if (limit !== undefined && !room.members.has(id) && room.members.size >= limit) {
        return { joined: false, reason: 'participant_limit_reached' };
      }
      room.members.set(id, frozenCopy(member));
      rooms.set(roomId, room);
      return { joined: true, startedAtMs: room.startedAtMs };
    },
    async update(roomId, member) {
      const members = rooms.get(roomId)?.members;
      if (members?.has(member.record.id)) members.set(member.record.id, frozenCopy(member));
    },
    async leave(roomId, participantId) {
      const room = rooms.get(roomId);
      const removed = room?.members.delete(participantId) ?? false;
      const remaining = room?.members.size ?? 0;
      if (room && remaining === 0) rooms.delete(roomId);
      return { removed, remaining };
    },
    // the stored records themselves, frozen: a join reads every member, and copying a room of
    // thousands for each of its joiners was most of the cost of filling it
    async members(roomId) {
      const records: MemberRecord[] = [];
      for (const member of rooms.get(roomId)?.members.values() ?? []) records.push(member.record);
      return records;
    },
    async member(roomId, participantId) {
      const member = rooms.get(roomId)?.members.get(participantId);
      return member && structuredClone(member);
    },
    async startedAt(roomId) {
      return rooms.get(roomId)?.startedAtMs;
    },
  };
}

/** A copy of the caller's member that nobody can change: what `members` hands out is this. */
function frozenCopy(member: Member): Member {
  const copy = structuredClone(member);
  Object.freeze(copy.record.control);
  Object.freeze(copy.record);
  return Object.freeze(copy);
}
