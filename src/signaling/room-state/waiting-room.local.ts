/** The in-process waiting-room store: one instance only (without Redis). */
import type { MemberRecord } from './membership-store.js';
import type { WaitingRoomStore } from './waiting-room-store.js';

export function createLocalWaitingRoomStore(): WaitingRoomStore {
  const waiting = new Map<string, Map<string, MemberRecord>>();
  const accepted = new Map<string, Set<string>>();

  const removeWaiting = (roomId: string, participantId: string): boolean => {
    const room = waiting.get(roomId);
    const removed = room?.delete(participantId) ?? false;
    if (room?.size === 0) waiting.delete(roomId);
    return removed;
  };

  return {
    async add(roomId, participant) {
      let room = waiting.get(roomId);
      if (!room) waiting.set(roomId, (room = new Map<string, MemberRecord>()));
      room.set(participant.id, structuredClone(participant));
    },
    async remove(roomId, participantId) {
      return removeWaiting(roomId, participantId);
    },
    async accept(roomId, participantId) {
      if (!removeWaiting(roomId, participantId)) return false;
      let room = accepted.get(roomId);
      if (!room) accepted.set(roomId, (room = new Set()));
      room.add(participantId);
      return true;
    },
    async waiting(roomId) {
      return [...(waiting.get(roomId)?.values() ?? [])].map((participant) => structuredClone(participant));
    },
    async isAccepted(roomId, participantId) {
      return accepted.get(roomId)?.has(participantId) ?? false;
    },
    async unaccept(roomId, participantId) {
      const room = accepted.get(roomId);
      room?.delete(participantId);
      if (room?.size === 0) accepted.delete(roomId);
    },
    async forgetAccepted(roomId) {
      accepted.delete(roomId);
    },
  };
}
