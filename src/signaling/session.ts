/**
 * One participant's connection as the modules see it: who it is, where it is in the join flow, and
 * a way to send it events. The WebSocket itself stays in connection.ts.
 *
 * States: `connected` (socket open, no `join` yet) → `joined`, or → `waiting` (waiting room) →
 * `accepted` (a moderator let it in; it may `enter_room`) → `joined`; any → `closed`.
 */
import type { Role } from '../../generated/signaling/types.js';
import type { ParticipantContext, RoomContext } from './room-context.js';

export type SessionState = 'connected' | 'waiting' | 'accepted' | 'joined' | 'closed';

/**
 * Why the server ends a session: a moderator's `kick`, `ban` or debriefing, the room's time limit,
 * a sweep that took its instance for dead, a failure halfway through a step, another socket resuming
 * it, the server's shutdown. The connection turns each into the socket's close code.
 */
export type SessionEnd = 'kicked' | 'banned' | 'debriefed' | 'time_limit' | 'taken_for_gone' | 'failed' | 'resumed_elsewhere' | 'server_shutdown';

/** A server event payload: tagged by `message` (by `action` in the echo namespace). */
export type EventPayload = Record<string, unknown>;

/**
 * A frame that many sessions are sent (a room event, by the room hub): the first session to send
 * it sets `wire`, the frame's bytes on the socket (the WebSocket frame of its JSON, with that
 * moment's timestamp), and the others write those same bytes, so that a room of thousands costs one
 * serialisation, not one per participant.
 */
export interface SharedFrame {
  readonly namespace: string;
  readonly payload: EventPayload;
  wire?: Buffer;
}

export interface Session {
  readonly participant: ParticipantContext;
  readonly room: RoomContext;
  state: SessionState;
  /** The current role: the connection's at first; modules may change it (moderator grants). */
  role: Role;
  /** Set by `join`: the trimmed display name, the avatar shown to others, the join time (RFC 3339). */
  displayName?: string;
  avatarUrl?: string;
  joinedAt?: string;
  /** Set by the control module while in the room: a raised hand, and when it last went up or down (RFC 3339). */
  handIsUp?: boolean;
  handUpdatedAt?: string;
  /**
   * Sends one server frame `{namespace, timestamp, payload}` to this participant. `payloadJson`:
   * `JSON.stringify(payload)` when the caller has it already (a `join_success` put together from
   * the room's kept parts), written instead of serialising the payload again.
   */
  send(namespace: string, payload: EventPayload, payloadJson?: string): void;
  /** Sends a frame shared with other sessions, as `send` would; a session without it is sent the frame by `send`. */
  sendShared?(frame: SharedFrame): void;
  /** Ends the session: its socket closes, with the close code the connection gives the reason; its departure follows. */
  leave(reason: SessionEnd): void;
  /**
   * Runs `task` in this session's order, as one of its commands: after the command (or task) in
   * progress, before its next one and before its departure. A module acts so on a room message
   * about the session (a moderator's order), which must not race the session's own commands.
   * Dropped once the socket is closing; a failure is logged.
   */
  enqueue(task: () => Promise<void>): void;
}
