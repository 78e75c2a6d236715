/**
 * A room's moderation switches, on every instance: raised hands disabled by a moderator, and the
 * waiting room switched on or off by a moderator for the running meeting (`enable_waiting_room`,
 * `disable_waiting_room`; `send_to_waiting_room` and `debrief` switch it on) whatever the room's own
 * setting. They hold while the room has a session and are forgotten when it empties, with the
 * waiting room's accepted marks: the next session begins with hands allowed and the room's setting.
 */
export interface RoomSettings {
  raiseHandsEnabled: boolean;
  /** The waiting room as a moderator switched it for the meeting; undefined: as the room's setting has it. */
  waitingRoom?: boolean;
}

export interface RoomSettingsStore {
  read(roomId: string): Promise<RoomSettings>;
  setRaiseHandsEnabled(roomId: string, enabled: boolean): Promise<void>;
  /**
   * Switches the waiting room on or off until the room empties, in one step on every instance:
   * answers the switch as it was (undefined: none yet), so of concurrent calls each knows what it changed.
   */
  setWaitingRoom(roomId: string, on: boolean): Promise<boolean | undefined>;
  /** The room emptied: back to the defaults. */
  forget(roomId: string): Promise<void>;
}

/** Whether the room has its waiting room on: as a moderator switched it, else as the room's setting has it. */
export const waitingRoomOn = (settings: RoomSettings, roomSetting: boolean): boolean => settings.waitingRoom ?? roomSetting;
