/** The in-process room settings store: one instance only (without Redis). */
import type { RoomSettings, RoomSettingsStore } from './room-settings-store.js';

const DEFAULTS: RoomSettings = { raiseHandsEnabled: true, waitingRoomForced: false };

export function createLocalRoomSettingsStore(): RoomSettingsStore {
  // only rooms with a switch away from its default are here
  const rooms = new Map<string, RoomSettings>();
  return {
    async read(roomId) {
      return { ...(rooms.get(roomId) ?? DEFAULTS) };
    },
    async setRaiseHandsEnabled(roomId, enabled) {
      rooms.set(roomId, { ...(rooms.get(roomId) ?? DEFAULTS), raiseHandsEnabled: enabled });
    },
    async forceWaitingRoom(roomId) {
      const settings = rooms.get(roomId) ?? DEFAULTS;
      rooms.set(roomId, { ...settings, waitingRoomForced: true });
      return !settings.waitingRoomForced;
    },
    async forget(roomId) {
      rooms.delete(roomId);
    },
  };
}
