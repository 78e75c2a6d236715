/**
 * A room's moderation switches, on every instance: raised hands disabled by a moderator, and the
 * waiting room turned on by a moderator (`send_to_waiting_room`, `debrief`) whatever the room's own
 * setting. They hold while the room has a session and are forgotten when it empties, with the
 * waiting room's accepted marks: the next session begins with hands allowed and the room's setting.
 */
export interface RoomSettings {
  raiseHandsEnabled: boolean;
  waitingRoomForced: boolean;
}

export interface RoomSettingsStore {
  read(roomId: string): Promise<RoomSettings>;
  setRaiseHandsEnabled(roomId: string, enabled: boolean): Promise<void>;
  /** Turns the waiting room on until the room empties; true when this call turned it on (it was not yet). */
  forceWaitingRoom(roomId: string): Promise<boolean>;
  /** The room emptied: back to the defaults. */
  forget(roomId: string): Promise<void>;
}
