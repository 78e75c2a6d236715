/**
 * What the moderation module's parts (the waiting room and its switch, removals, renaming, raised
 * hands) share: its stores, the control module, the `error` answer, letting a waiting participant
 * in, and a moderator's order.
 *
 * An order is a moderation room message no client is sent (the module withholds it): the sender's
 * instance publishes it once it has checked the command and done what is shared (stores, database),
 * and the instance holding each session concerned carries it out in that session's order
 * (`Session.enqueue`), so it never races the session's own commands or its departure.
 */
import type { ModerationErrorEvent } from '../../../../generated/signaling/types.js';
import type { RoomEntryService } from '../../../domain/rooms/room-entry.service.js';
import type { RoomHub } from '../../room-hub.js';
import type { EventPayload, Session } from '../../session.js';
import type { ListedRecently } from '../listed-recently.js';
import type { ControlModule, ModuleDeps } from '../module.js';
import type { RoomSettingsStore } from '../../room-state/room-settings-store.js';
import type { WaitingRoomStore } from '../../room-state/waiting-room-store.js';

export type ModerationError = ModerationErrorEvent['payload']['error'];

export interface ModerationContext {
  deps: ModuleDeps;
  /** Bans (of a user, or of a guest's invite code). */
  roomEntry: RoomEntryService;
  waitingRoom: WaitingRoomStore;
  settings: RoomSettingsStore;
  control(): ControlModule;
  fail(session: Session, error: ModerationError): void;
  /**
   * Puts a session (display name and join time set, not in the room) into the waiting room: state
   * `waiting`, `joined_waiting_room` to the moderators, then `answer` to it.
   */
  enterWaitingRoom(session: Session, hub: RoomHub, answer: EventPayload): Promise<void>;
  /**
   * Lets a waiting participant (on any instance) in, as `accept` does: `accepted` to it,
   * `left_waiting_room` to the moderators. False when it was not waiting (let in meanwhile, or gone).
   */
  admit(roomId: string, participantId: string, hub: RoomHub): Promise<boolean>;
}

/** What the module's waiting room (waiting-room.ts) works with beside the context: the waiting lists each moderator was shown. */
export interface ModerationParts extends ModerationContext {
  /** Per moderator: the recent arrivals its waiting list named, whose `joined_waiting_room` it must not get again. */
  listed: ListedRecently;
}

/** Turns the room's waiting room on until the room empties; when it was off, everyone in the room is told. */
export async function forceWaitingRoom(context: ModerationContext, session: Session, hub: RoomHub): Promise<void> {
  const previous = await context.settings.setWaitingRoom(session.room.roomId, true);
  if (!(previous ?? session.room.waitingRoom)) {
    await hub.publish({ namespace: 'moderation', payload: { message: 'waiting_room_enabled' }, audience: { to: 'room' } });
  }
}
