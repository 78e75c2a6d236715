/** The in-process room settings store: one instance only (without Redis). */
import type { RoomSettings, RoomSettingsStore } from './room-settings-store.js';

const DEFAULTS: RoomSettings = { raiseHandsEnabled: true };

export function createLocalRoomSettingsStore(): RoomSettingsStore {
  // only rooms with a switch away from its default are here (as the Redis store keeps no key for the others)
  const rooms = new Map<string, RoomSettings>();
  const put = (roomId: string, settings: RoomSettings) => {
    if (settings.raiseHandsEnabled === DEFAULTS.raiseHandsEnabled && settings.waitingRoom === undefined) rooms.delete(roomId);
    else rooms.set(roomId, settings);
  };
  return {
    async read(roomId) {
      return { ...(rooms.get(roomId) ?? DEFAULTS) };
    },
    async setRaiseHandsEnabled(roomId, enabled) {
      put(roomId, { ...(rooms.get(roomId) ?? DEFAULTS), raiseHandsEnabled: enabled });
    },
    async setWaitingRoom(roomId, on) {
      const settings = rooms.get(roomId) ?? DEFAULTS;
      put(roomId, { ...settings, waitingRoom: on });
      return settings.waitingRoom;
    },
    async forget(roomId) {
      rooms.delete(roomId);
    },
  };
}
