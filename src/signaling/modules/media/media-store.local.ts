/**
 * The in-process media store (no Redis): one instance only. Each operation runs without awaiting
 * anything in between, so it is as atomic here as its Lua script is in Redis.
 */
import {
  assertStorableAssignment,
  assertStorablePublisher,
  MEDIA_SESSION_TYPES,
  type JanusRoomAssignment,
  type MediaPeer,
  type MediaSessionType,
  type MediaStore,
  type ParticipantMedia,
  type PublisherEntry,
  type SpeakerState,
} from './media-store.js';

type Publications = Partial<Record<MediaSessionType, number>>;

interface RoomMedia {
  sessions: Map<string, ParticipantMedia>;
  presenters: Set<string>;
  /** undefined: force-mute off. */
  allowList?: string[];
  speakers: Map<string, SpeakerState>;
  assignment?: JanusRoomAssignment;
  lastFeedId: number;
  /** Participant id → feed id of each session type it publishes. */
  publishers: Map<string, Publications>;
}

const newRoom = (): RoomMedia => ({ sessions: new Map(), presenters: new Set(), speakers: new Map(), lastFeedId: 0, publishers: new Map() });

/** Takes one session type out of a participant's entry, and drops the entry once it holds none, as Redis drops an emptied field. */
/** Deletes the participant's entry of `type`; answers whether there was one. */
function withoutType<V>(entries: Map<string, Partial<Record<MediaSessionType, V>>>, participantId: string, type: MediaSessionType): boolean {
  const entry = entries.get(participantId);
  if (entry?.[type] === undefined) return false;
  const { [type]: _dropped, ...rest } = entry;
  if (Object.keys(rest).length === 0) entries.delete(participantId);
  else entries.set(participantId, rest);
  return true;
}

export function createLocalMediaStore(): MediaStore {
  const rooms = new Map<string, RoomMedia>();
  const roomOf = (roomId: string): RoomMedia => {
    let room = rooms.get(roomId);
    if (!room) rooms.set(roomId, (room = newRoom()));
    return room;
  };
  const statesOf = (roomId: string, participantId: string) => structuredClone(rooms.get(roomId)?.sessions.get(participantId));

  return {
    async setSessionState(roomId, participantId, type, state) {
      const sessions = roomOf(roomId).sessions;
      let media = sessions.get(participantId);
      if (!media) sessions.set(participantId, (media = {}));
      media[type] = { audio: state.audio, video: state.video };
    },
    async deleteSessionState(roomId, participantId, type) {
      const room = rooms.get(roomId);
      return room !== undefined && withoutType(room.sessions, participantId, type);
    },
    async sessionStates(roomId, participantIds) {
      const states = new Map<string, ParticipantMedia>();
      for (const id of participantIds) {
        const media = statesOf(roomId, id);
        if (media) states.set(id, media);
      }
      return states;
    },
    async peers(roomId, participantIds) {
      const presenters = rooms.get(roomId)?.presenters;
      return new Map(participantIds.map((id): [string, MediaPeer] => [id, { ...statesOf(roomId, id), is_presenter: presenters?.has(id) ?? false }]));
    },

    async addPresenters(roomId, participantIds) {
      const presenters = roomOf(roomId).presenters;
      const added: string[] = [];
      for (const id of participantIds) {
        if (presenters.has(id)) continue;
        presenters.add(id);
        added.push(id);
      }
      return added;
    },
    async removePresenters(roomId, participantIds) {
      const presenters = rooms.get(roomId)?.presenters;
      return presenters ? participantIds.filter((id) => presenters.delete(id)) : [];
    },
    async presenters(roomId, participantIds) {
      const presenters = rooms.get(roomId)?.presenters;
      return new Set(participantIds.filter((id) => presenters?.has(id)));
    },

    async forceMute(roomId) {
      const allowList = rooms.get(roomId)?.allowList;
      return allowList ? { type: 'enabled', allow_list: [...allowList] } : { type: 'disabled' };
    },
    async setForceMute(roomId, allowList) {
      roomOf(roomId).allowList = allowList && [...allowList];
    },

    async setSpeaking(roomId, state) {
      roomOf(roomId).speakers.set(state.participant, { ...state });
    },
    async speakers(roomId) {
      return [...(rooms.get(roomId)?.speakers.values() ?? [])].map((state) => ({ ...state }));
    },

    async assignJanusRoom(roomId, candidate) {
      assertStorableAssignment(candidate);
      const room = roomOf(roomId);
      room.assignment ??= { server: candidate.server, janusRoomId: candidate.janusRoomId };
      return { ...room.assignment };
    },
    async janusRoom(roomId) {
      const assignment = rooms.get(roomId)?.assignment;
      return assignment && { ...assignment };
    },
    async releaseJanusRoom(roomId, expected) {
      const room = rooms.get(roomId);
      if (room?.assignment?.server !== expected.server || room.assignment.janusRoomId !== expected.janusRoomId) return false;
      delete room.assignment;
      return true;
    },

    async nextFeedId(roomId) {
      return ++roomOf(roomId).lastFeedId;
    },
    async setPublisher(roomId, participantId, type, record) {
      assertStorablePublisher(record);
      const publishers = roomOf(roomId).publishers;
      let publications = publishers.get(participantId);
      if (!publications) publishers.set(participantId, (publications = {}));
      publications[type] = record.feedId;
    },
    async publisher(roomId, participantId, type) {
      const feedId = rooms.get(roomId)?.publishers.get(participantId)?.[type];
      return feedId === undefined ? undefined : { feedId };
    },
    async deletePublisher(roomId, participantId, type) {
      const room = rooms.get(roomId);
      return room !== undefined && withoutType(room.publishers, participantId, type);
    },
    async publishers(roomId) {
      const entries: PublisherEntry[] = [];
      for (const [participantId, publications] of rooms.get(roomId)?.publishers ?? []) {
        for (const type of MEDIA_SESSION_TYPES) {
          const feedId = publications[type];
          if (feedId !== undefined) entries.push({ participantId, type, record: { feedId } });
        }
      }
      return entries;
    },

    async forgetParticipant(roomId, participantId) {
      const room = rooms.get(roomId);
      if (!room) return;
      room.sessions.delete(participantId);
      room.presenters.delete(participantId);
      room.speakers.delete(participantId);
      room.publishers.delete(participantId);
    },
    async forgetRoom(roomId) {
      rooms.delete(roomId);
    },
  };
}
