/**
 * Moderators switching the waiting room on and off for the running meeting (reference: OpenTalk's
 * moderation module, `enable_waiting_room` / `disable_waiting_room`). The switch is the room
 * settings store's, shared by every instance and forgotten when the room empties; the room's own
 * `waiting_room` setting is not touched. Those in the room stay; everyone in it is told
 * (`waiting_room_enabled` / `waiting_room_disabled`, also when nothing changed, as the reference
 * does). Switching it off lets everyone waiting in, oldest first, as a moderator's `accept` would
 * (`accepted` reaches each on its own instance); a participant that started waiting just as the
 * switch went off lets itself in (moderation.module.ts, `enterWaitingRoom`).
 */
import type { RoomHub } from '../../room-hub.js';
import type { Session } from '../../session.js';
import { byJoinTime } from '../../room-state/member-records.js';
import type { ModerationContext } from './moderation-context.js';

export interface WaitingRoomSwitch {
  setEnabled(session: Session, on: boolean, hub: RoomHub): Promise<void>;
}

export function createWaitingRoomSwitch(context: ModerationContext): WaitingRoomSwitch {
  return {
    async setEnabled(session, on, hub) {
      if (session.role !== 'moderator') return context.fail(session, 'insufficient_permissions');
      const { roomId } = session.room;
      await context.settings.setWaitingRoom(roomId, on);
      await hub.publish({ namespace: 'moderation', payload: { message: on ? 'waiting_room_enabled' : 'waiting_room_disabled' }, audience: { to: 'room' } });
      if (on) return;
      for (const { id } of byJoinTime(await context.waitingRoom.waiting(roomId))) await context.admit(roomId, id, hub);
    },
  };
}
