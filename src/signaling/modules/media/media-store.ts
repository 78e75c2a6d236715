/**
 * Where a room's media state lives: in this process (one instance) or in Redis, shared by every
 * instance (docs/architecture.md §6). Per room: each participant's published sessions (camera and
 * screen share: audio and video on or off), who may present, the moderators' force-mute and its
 * allow list, who is speaking, the one Janus room the room's media runs in (on one Janus server,
 * pinned for the room's life) and the streams published into it (their feed ids).
 *
 * Every operation that decides something is atomic in the store itself, so that it holds however
 * many instances race: the first assignment of a Janus room wins, a release deletes only the
 * assignment it expected, and feed ids are never handed out twice in a room.
 *
 * A participant's state goes when it leaves (`forgetParticipant`), the room's when it empties
 * (`forgetRoom`); in Redis, should no instance be left to forget it, it expires on its own.
 */

export type MediaSessionType = 'video' | 'screen';

export const MEDIA_SESSION_TYPES: readonly MediaSessionType[] = ['video', 'screen'];

export interface MediaSessionState {
  audio: boolean;
  video: boolean;
}

export interface SpeakerState {
  participant: string;
  is_speaking: boolean;
  /** RFC 3339 */
  updated_at: string;
}

/** Force-mute: off, or on for everyone but the participants of the allow list. */
export type ForceMute = { type: 'disabled' } | { type: 'enabled'; allow_list: string[] };

/** Where a room's media lives: one Janus room on one Janus server, pinned for the room's life. */
export interface JanusRoomAssignment {
  /** The Janus server's WebSocket URL. */
  server: string;
  /** A positive safe integer. */
  janusRoomId: number;
}

/** A published stream: its feed id (the publisher's id inside the Janus room). */
export interface PublisherRecord {
  feedId: number;
}

/** A participant's session states by session type (a type it publishes nothing of is absent). */
export interface ParticipantMedia {
  video?: MediaSessionState;
  screen?: MediaSessionState;
}

/** What the others are shown of a participant: its sessions and whether it may present. */
export interface MediaPeer extends ParticipantMedia {
  is_presenter: boolean;
}

export interface PublisherEntry {
  participantId: string;
  type: MediaSessionType;
  record: PublisherRecord;
}

export interface MediaStore {
  setSessionState(roomId: string, participantId: string, type: MediaSessionType, state: MediaSessionState): Promise<void>;
  /** Answers whether there was one. */
  deleteSessionState(roomId: string, participantId: string, type: MediaSessionType): Promise<boolean>;
  /** The session states of the given participants (those with none are absent). */
  sessionStates(roomId: string, participantIds: readonly string[]): Promise<Map<string, ParticipantMedia>>;
  /** The sessions and presenter flag of each given participant (every one present), in one step: a joiner's view of the room. */
  peers(roomId: string, participantIds: readonly string[]): Promise<Map<string, MediaPeer>>;

  /** Makes them presenters; answers those that were not before. */
  addPresenters(roomId: string, participantIds: readonly string[]): Promise<string[]>;
  /** Takes the presenter flag; answers those that had it. */
  removePresenters(roomId: string, participantIds: readonly string[]): Promise<string[]>;
  /** Which of the given participants are presenters. */
  presenters(roomId: string, participantIds: readonly string[]): Promise<Set<string>>;

  forceMute(roomId: string): Promise<ForceMute>;
  /** Force-mute on, but for the allow list; undefined: off. */
  setForceMute(roomId: string, allowList: readonly string[] | undefined): Promise<void>;

  setSpeaking(roomId: string, state: SpeakerState): Promise<void>;
  /** The last speaker state of every participant that reported one, in no promised order. */
  speakers(roomId: string): Promise<SpeakerState[]>;

  /** First caller wins, on every instance: the room's assignment, which is `candidate` when the room had none. */
  assignJanusRoom(roomId: string, candidate: JanusRoomAssignment): Promise<JanusRoomAssignment>;
  janusRoom(roomId: string): Promise<JanusRoomAssignment | undefined>;
  /** Deletes the assignment only while it is still `expected` (compare-and-delete); true when it deleted it. */
  releaseJanusRoom(roomId: string, expected: JanusRoomAssignment): Promise<boolean>;

  /** 1, 2, 3 …: never the same twice in a room until it is forgotten, however many instances ask. */
  nextFeedId(roomId: string): Promise<number>;
  setPublisher(roomId: string, participantId: string, type: MediaSessionType, record: PublisherRecord): Promise<void>;
  publisher(roomId: string, participantId: string, type: MediaSessionType): Promise<PublisherRecord | undefined>;
  /** Answers whether there was one. */
  deletePublisher(roomId: string, participantId: string, type: MediaSessionType): Promise<boolean>;
  /** Every publisher of the room, in no promised order (for cleanup). */
  publishers(roomId: string): Promise<PublisherEntry[]>;

  /** The participant left: its session states, presenter flag, speaker state and publisher records go. */
  forgetParticipant(roomId: string, participantId: string): Promise<void>;
  /** The room emptied: everything of it goes, its Janus room's assignment and feed ids included. */
  forgetRoom(roomId: string): Promise<void>;
}

const isPositiveSafeInteger = (n: number) => Number.isSafeInteger(n) && n > 0;

/** Refuses what no store can keep (a caller's bug): an empty server or a room id that is not a positive safe integer. */
export function assertStorableAssignment(assignment: JanusRoomAssignment): void {
  if (assignment.server === '' || !isPositiveSafeInteger(assignment.janusRoomId)) {
    throw new RangeError(`not a Janus room assignment: ${JSON.stringify(assignment)}`);
  }
}

/** Refuses a feed id that is not a positive safe integer (a caller's bug). */
export function assertStorablePublisher(record: PublisherRecord): void {
  if (!isPositiveSafeInteger(record.feedId)) throw new RangeError(`not a feed id: ${JSON.stringify(record.feedId)}`);
}
