/**
 * Where a room's chat lives while the room is in use: in this process (one instance) or in Redis,
 * shared by every instance (docs/architecture.md §6). Per room: whether a moderator switched the chat off, the
 * history of each scope (the room's, each group's, each pair of participants'), who exchanged
 * private messages with whom, and each participant's last-seen timestamps. Who is in the room is
 * the membership's to say (the control module), not this store's.
 *
 * Bounded: each history keeps its last `HISTORY_LIMIT` messages; a participant's last-seen entries
 * are one per scope it may read (the chat module checks); everything is forgotten when the room
 * empties (and in Redis, should no instance be left to forget it, expires a week after its last
 * change).
 *
 * `post` checks the chat's switch and appends in one atomic step, so a message is never stored
 * after the switch went off, whichever instance switched it.
 */
import type { ChatScope } from '../../../../generated/signaling/types.js';

/** Messages kept per scope (the room, each group, each pair of participants). */
export const HISTORY_LIMIT = 100;

/** A message as the histories keep it: `message_sent` without `message`, plus when it was handled. */
export interface StoredMessage {
  id: string;
  source: string;
  content: string;
  scope: ChatScope;
  /** The group (`group`) or the receiving participant (`private`). */
  target?: string;
  /** RFC 3339 */
  timestamp: string;
}

/** Which messages a last-seen timestamp is for: the room's, one group's, or those with one participant. */
export type ScopeRef = { scope: 'global' } | { scope: 'group' | 'private'; target: string };

export interface LastSeen {
  global?: string;
  /** Group → timestamp. */
  groups: Record<string, string>;
  /** Participant id → timestamp. */
  private: Record<string, string>;
}

/** What a joining participant is shown: every history oldest first. */
export interface ChatState {
  enabled: boolean;
  room: StoredMessage[];
  /** One entry per group asked for, in that order (empty when nothing was said there). */
  groups: { name: string; history: StoredMessage[] }[];
  /** One entry per participant this one exchanged private messages with. */
  private: { correspondent: string; history: StoredMessage[] }[];
  lastSeen: LastSeen;
}

export type PostOutcome = 'posted' | 'chat_disabled';

export interface ChatStore {
  /** The chat as it is shown to a joining participant in these groups. */
  join(roomId: string, participantId: string, groups: readonly string[]): Promise<ChatState>;
  /** Appends to the message's scope unless the chat is off. */
  post(roomId: string, message: StoredMessage): Promise<PostOutcome>;
  setEnabled(roomId: string, enabled: boolean): Promise<void>;
  /** Empties the room's (global) history; group and private histories stay. */
  clearRoomHistory(roomId: string): Promise<void>;
  /** Whether the two participants exchanged private messages in the room. */
  isCorrespondent(roomId: string, participantId: string, other: string): Promise<boolean>;
  /** Records a last-seen timestamp (the caller checked that the participant may read the scope). */
  setLastSeen(roomId: string, participantId: string, scope: ScopeRef, timestamp: string): Promise<void>;
  /** The room emptied: everything of its chat goes. */
  forget(roomId: string): Promise<void>;
}

/** The two participants of a private chat in a fixed order, so either one names the same history. */
export const pairOf = (a: string, b: string): [string, string] => (a < b ? [a, b] : [b, a]);

/** No last-seen timestamps yet; the maps have no prototype, so a group named `__proto__` is just a key. */
export const noneSeen = (): LastSeen => ({ groups: Object.create(null) as Record<string, string>, private: Object.create(null) as Record<string, string> });
