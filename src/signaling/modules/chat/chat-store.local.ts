/**
 * The in-process chat store (no Redis): one instance only. Each operation runs without awaiting
 * anything in between, so it is as atomic here as its Lua script is in Redis.
 */
import { HISTORY_LIMIT, noneSeen, pairOf, type ChatState, type ChatStore, type LastSeen, type StoredMessage } from './chat-store.js';

interface RoomChat {
  disabled: boolean;
  room: StoredMessage[];
  groups: Map<string, StoredMessage[]>;
  /** By the pair's ids joined with a space (ids never contain one). */
  pairs: Map<string, StoredMessage[]>;
  correspondents: Map<string, Set<string>>;
  lastSeen: Map<string, LastSeen>;
}

const pairKey = (a: string, b: string) => pairOf(a, b).join(' ');

function append<K>(histories: Map<K, StoredMessage[]>, key: K, message: StoredMessage): void {
  let history = histories.get(key);
  if (!history) histories.set(key, (history = []));
  history.push(structuredClone(message));
  if (history.length > HISTORY_LIMIT) history.splice(0, history.length - HISTORY_LIMIT);
}

function addTo<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(value);
}

export function createLocalChatStore(): ChatStore {
  const rooms = new Map<string, RoomChat>();
  const roomOf = (roomId: string): RoomChat => {
    let room = rooms.get(roomId);
    if (!room) {
      room = { disabled: false, room: [], groups: new Map(), pairs: new Map(), correspondents: new Map(), lastSeen: new Map() };
      rooms.set(roomId, room);
    }
    return room;
  };

  return {
    async join(roomId, participantId, groups) {
      const room = rooms.get(roomId);
      const state: ChatState = {
        enabled: !room?.disabled,
        room: room?.room ?? [],
        groups: groups.map((name) => ({ name, history: room?.groups.get(name) ?? [] })),
        private: [...(room?.correspondents.get(participantId) ?? [])].map((correspondent) => ({
          correspondent,
          history: room?.pairs.get(pairKey(participantId, correspondent)) ?? [],
        })),
        lastSeen: room?.lastSeen.get(participantId) ?? noneSeen(),
      };
      return structuredClone(state);
    },

    async post(roomId, message) {
      const room = roomOf(roomId);
      if (room.disabled) return 'chat_disabled';
      const { scope, source, target } = message;
      if (scope === 'global') {
        room.room.push(structuredClone(message));
        if (room.room.length > HISTORY_LIMIT) room.room.shift();
      } else if (scope === 'group') {
        append(room.groups, target!, message);
      } else {
        append(room.pairs, pairKey(source, target!), message);
        addTo(room.correspondents, source, target!);
        addTo(room.correspondents, target!, source);
      }
      return 'posted';
    },

    async setEnabled(roomId, enabled) {
      roomOf(roomId).disabled = !enabled;
    },

    async clearRoomHistory(roomId) {
      const room = rooms.get(roomId);
      if (room) room.room = [];
    },

    async isCorrespondent(roomId, participantId, other) {
      return rooms.get(roomId)?.correspondents.get(participantId)?.has(other) ?? false;
    },

    async setLastSeen(roomId, participantId, ref, timestamp) {
      const room = roomOf(roomId);
      let seen = room.lastSeen.get(participantId);
      if (!seen) room.lastSeen.set(participantId, (seen = noneSeen()));
      if (ref.scope === 'global') seen.global = timestamp;
      else if (ref.scope === 'group') seen.groups[ref.target] = timestamp;
      else seen.private[ref.target] = timestamp;
    },

    async forget(roomId) {
      rooms.delete(roomId);
    },
  };
}
