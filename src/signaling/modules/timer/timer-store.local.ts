/**
 * The in-process timer store (no Redis): one instance only. Each operation runs without awaiting
 * anything in between, so it is as atomic here as its Lua script is in Redis.
 */
import type { RunningTimer, TimerStore } from './timer-store.js';

interface RoomTimer {
  timer: RunningTimer;
  readyStatuses: Map<string, boolean>;
}

export function createLocalTimerStore(): TimerStore {
  const rooms = new Map<string, RoomTimer>();
  const running = (roomId: string, timerId: string) => {
    const room = rooms.get(roomId);
    return room?.timer.timer_id === timerId ? room : undefined;
  };
  return {
    async create(roomId, timer) {
      if (rooms.has(roomId)) return false;
      rooms.set(roomId, { timer: structuredClone(timer), readyStatuses: new Map() });
      return true;
    },
    async get(roomId) {
      const room = rooms.get(roomId);
      return room && structuredClone(room.timer);
    },
    async take(roomId, timerId) {
      return running(roomId, timerId) !== undefined && rooms.delete(roomId);
    },
    async setReadyStatus(roomId, timerId, participantId, status) {
      const room = running(roomId, timerId);
      if (!room?.timer.ready_check_enabled) return false;
      room.readyStatuses.set(participantId, status);
      return true;
    },
    async readyStatuses(roomId, participantIds) {
      const stored = rooms.get(roomId)?.readyStatuses;
      const statuses = new Map<string, boolean>();
      for (const id of participantIds) {
        const status = stored?.get(id);
        if (status !== undefined) statuses.set(id, status);
      }
      return statuses;
    },
    async deleteReadyStatus(roomId, participantId) {
      rooms.get(roomId)?.readyStatuses.delete(participantId);
    },
  };
}
