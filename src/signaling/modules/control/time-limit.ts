/**
 * The tariff's `room_time_limit_secs`: a room's session ends that long after it began (its first
 * join since it was last empty), whichever instance its participants are on. Each instance closes
 * its own sessions of the room (`time_limit`), those waiting to enter too, when the time is up; the timer
 * is armed when a participant joins here and disarmed when the room's last local session leaves
 * this instance.
 *
 * When the timer fires, the start time is read again: a room that emptied and began anew meanwhile
 * (on another instance) has a later end, and the timer is armed again for it.
 */
import type { RoomContext } from '../../room-context.js';
import type { ModuleDeps } from '../module.js';
import type { MembershipStore } from '../../room-state/membership-store.js';

export interface TimeLimit {
  /** The end of the room's session, when its tariff limits the time. */
  closesAt(room: RoomContext, startedAtMs: number): number | undefined;
  /** Closes this instance's sessions of the room at `closesAtMs` (once per room). */
  arm(room: RoomContext, closesAtMs: number): void;
  disarm(roomId: string): void;
}

interface Armed {
  closesAtMs: number;
  cancel: () => void;
}

export function createTimeLimit(deps: Pick<ModuleDeps, 'scheduler' | 'hubs' | 'logger'>, membership: MembershipStore): TimeLimit {
  const armed = new Map<string, Armed>();
  async function expire(room: RoomContext, entry: Armed) {
    if (armed.get(room.roomId) !== entry) return;
    armed.delete(room.roomId);
    const startedAtMs = await membership.startedAt(room.roomId);
    const hub = deps.hubs().get(room.roomId);
    // the room's last local session left meanwhile: nothing here to close or to watch any longer
    if (!hub) return;
    const current = startedAtMs === undefined ? undefined : limit.closesAt(room, startedAtMs);
    if (current === undefined) return;
    if (current > deps.scheduler.now()) return limit.arm(room, current);
    for (const session of [...hub.sessions.values()]) session.leave('time_limit');
  }

  const limit: TimeLimit = {
    closesAt(room, startedAtMs) {
      const seconds = room.tariff.quotas.room_time_limit_secs;
      return seconds === undefined ? undefined : startedAtMs + seconds * 1000;
    },
    arm(room, closesAtMs) {
      const current = armed.get(room.roomId);
      if (current?.closesAtMs === closesAtMs) return;
      current?.cancel();
      // in the map before it is scheduled: a time already past may run the task at once
      const entry: Armed = { closesAtMs, cancel: () => {} };
      armed.set(room.roomId, entry);
      entry.cancel = deps.scheduler.at(closesAtMs, () => {
        expire(room, entry).catch((err: unknown) => deps.logger.error({ err, roomId: room.roomId }, 'closing a room at its time limit failed'));
      });
    },
    disarm(roomId) {
      armed.get(roomId)?.cancel();
      armed.delete(roomId);
    },
  };
  return limit;
}
