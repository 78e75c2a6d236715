/**
 * Where the signaling entry state lives between HTTP requests and WebSocket connections: tickets
 * and resumption records (docs/architecture.md §6). The in-process store serves one
 * instance; with Redis every instance sees the same state, so a ticket issued by one instance can
 * be redeemed on another.
 *
 * The port: the start operations (start.service.ts) and the signaling WebSocket use it; its two
 * implementations, in-process and Redis, are in src/signaling/store/ and are chosen by server.ts.
 *
 * Lifecycle of a resumption token (issued anew with every ticket):
 *   start_*            → the token travels inside the ticket; nothing is stored yet
 *   WebSocket opens    → saveResumption (connected, expires in 120 s unless refreshed)
 *   every 60 s         → refreshResumption; false means the token was taken: close the old socket
 *   WebSocket drops    → markDisconnected (valid 120 s more)
 *   start_* with token → takeResumption: reused participant id, `running`, or nothing (ignored)
 */

export const TICKET_TTL_SECONDS = 30;
export const RESUMPTION_TTL_SECONDS = 120;
/** How often a live session should refresh its record: well inside the TTL. */
export const RESUMPTION_REFRESH_SECONDS = 60;

/** Who a participant is: a registered user, a guest with an invite code, or a SIP caller. */
export type ParticipantIdentity = { kind: 'user'; userId: string } | { kind: 'guest'; inviteCode: string } | { kind: 'sip'; sipId: string };

export interface TicketData {
  participantId: string;
  roomId: string;
  who: ParticipantIdentity;
  /** Breakout rooms are not supported: always null. */
  breakoutRoom: null;
  /** The token the session will save on connect; a later start may present it. */
  resumption: string;
  /** True when the participant id was taken over from a previous session. */
  resuming: boolean;
}

export interface ResumptionRecord {
  participantId: string;
  roomId: string;
  who: ParticipantIdentity;
}

/** A record as both stores keep it: connected until the session drops. */
export interface StoredResumption extends ResumptionRecord {
  connected: boolean;
  /**
   * With Redis, the instance hosting the connected session (instance-liveness.ts): should it die,
   * nobody marks the session disconnected, so a take treats a record whose host is gone as dropped.
   */
  instance?: string;
}

export type ResumptionTake =
  | { outcome: 'resumed'; record: ResumptionRecord }
  /** The session of that token is still connected: the start answers 400 `session_running`. */
  | { outcome: 'running' }
  /** Unknown, expired, already used, or for another room or person: the start ignores it. */
  | { outcome: 'none' };

export interface SignalingStore {
  /** Stores a new ticket for 30 s; false when the ticket already exists (never overwritten). */
  putTicket(ticket: string, data: TicketData): Promise<boolean>;
  /** Returns and deletes the ticket (single use); undefined when unknown, used or expired. */
  takeTicket(ticket: string): Promise<TicketData | undefined>;

  /**
   * A session started with this token: record it as connected, expiring in 120 s unless refreshed.
   * `instance`: this instance's liveness id (with Redis), so that its death frees the token at once.
   */
  saveResumption(token: string, record: ResumptionRecord, instance?: string): Promise<void>;
  /** Extends a live session's record by 120 s; false when it is gone (taken by a resuming start). */
  refreshResumption(token: string): Promise<boolean>;
  /** The session dropped: the token stays usable for 120 s from now. No-op when the record is gone. */
  markDisconnected(token: string): Promise<void>;
  /**
   * Uses a token presented to a start operation by `expected` in `roomId`. Deletes the record only
   * when it is resumed, so a token presented for another room or person stays valid for its owner.
   */
  takeResumption(token: string, roomId: string, expected: ParticipantIdentity): Promise<ResumptionTake>;

  close(): Promise<void>;
}

export function sameParticipant(a: ParticipantIdentity, b: ParticipantIdentity): boolean {
  switch (a.kind) {
    case 'user':
      return b.kind === 'user' && a.userId === b.userId;
    case 'guest':
      return b.kind === 'guest' && a.inviteCode === b.inviteCode;
    case 'sip':
      return b.kind === 'sip' && a.sipId === b.sipId;
  }
}
