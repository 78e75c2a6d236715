/**
 * What a signaling module is (docs/architecture.md §6): a namespace with commands, join-time data, per-
 * participant peer data, and reactions to room messages and departures. Modules hold no socket; they
 * act on sessions and publish room messages through their hub, so the same code serves one instance
 * or many (the bus and the module's state store decide which).
 *
 * The control module drives the join flow and departures and asks the other modules for their
 * parts; the connection hands each validated command to its namespace's module.
 */
import type { Config } from '../../config/schema.js';
import type { RoomEntryService } from '../../domain/rooms/room-entry.service.js';
import type { SignalingWebhooks } from '../webhooks.js';
import type { Logger } from '../../logger.js';
import type { InstanceLiveness } from '../../redis/instance-liveness.js';
import type { SignalingBus } from '../bus/signaling-bus.js';
import type { HubModule, RoomHub, RoomHubs } from '../room-hub.js';
import type { RoomStores } from '../room-stores.js';
import type { Scheduler } from '../scheduler.js';
import type { Session } from '../session.js';
import type { Member } from '../room-state/membership-store.js';

/** A validated command's payload: `{action, ...}` as the namespace's schema allows. */
export type CommandPayload = { action: string } & Record<string, unknown>;

/**
 * Why a participant left the room (the `left` event's `reason`): its socket closed (`quit`), it
 * stopped answering (`timeout`), or a moderator removed it (`kicked`, also by a debriefing;
 * `banned`; `sent_to_waiting_room`).
 */
export type LeaveReason = 'quit' | 'timeout' | 'kicked' | 'banned' | 'sent_to_waiting_room';

/** What its room hubs call (HubModule, room-hub.ts): one entry for a hub's events (opened, closed, a room message), and the delivery filter. */
export interface SignalingModule extends HubModule {
  readonly namespace: string;
  /**
   * A command of this namespace from a session, already checked against its generated validator.
   * The connection only passes commands of joined sessions, except to `control` and `echo`.
   */
  handleCommand(session: Session, command: CommandPayload, hub: RoomHub): Promise<void>;
  /** The joining participant's data under this namespace's key of `join_success`; undefined: absent. */
  joinData?(session: Session, hub: RoomHub): Promise<unknown>;
  /** Peer data of the given participants under this namespace's key of each Participant; absent ids: none. */
  peerData?(roomId: string, participantIds: readonly string[]): Promise<ReadonlyMap<string, unknown>>;
  /** A participant left the room or the waiting room; `roomEmpty`: nobody is left in the room on any instance. */
  participantLeft?(session: Session, hub: RoomHub, info: { roomEmpty: boolean }): Promise<void>;
  close?(): Promise<void>;
}

/** What every module factory gets: services, stores and the `[signaling]` settings, never the database or Redis. */
export interface ModuleDeps {
  config: Config['signaling'];
  /** Who may enter a room, and bans (the moderation module's `ban`). */
  roomEntry: RoomEntryService;
  /** The rooms' state, in Redis when instances share it (room-stores.ts). */
  stores: RoomStores;
  /** Set when instances share state through Redis: this instance's liveness, which the records it hosts name (crash cleanup). */
  liveness?: InstanceLiveness;
  bus: SignalingBus;
  hubs: () => RoomHubs;
  scheduler: Scheduler;
  logger: Logger;
  /** Every module by namespace, for the control module's join and leave (filled before any use). */
  modules: () => ReadonlyMap<string, SignalingModule>;
  /** Queues the webhook events of signaling; absent where there is no database (module tests). */
  webhooks?: SignalingWebhooks;
}

/** The control module also drives departures: the connection calls `disconnect` when a socket closes. */
export interface ControlModule extends SignalingModule {
  readonly namespace: 'control';
  /**
   * The socket closed, or a moderator removed the participant: leave the room (or the waiting room),
   * tell the others (`left` with `reason`, or the moderators `left_waiting_room`), then let every
   * module clean up (`participantLeft`).
   */
  disconnect(session: Session, hub: RoomHub, reason: LeaveReason): Promise<void>;
  /** Publishes `update` (the joined participant as it is now, with every module's peer data) to the others. */
  publishUpdate(session: Session, hub: RoomHub): Promise<void>;
  /** Lowers the joined session's raised hand (the others get `update`); call it in the session's order. */
  lowerHand(session: Session, hub: RoomHub): Promise<void>;
  /**
   * Gives the joined session a new display name (checked by the caller), in the membership store
   * and on the session; nobody is told (the caller then publishes `update`). Call it in the session's order.
   */
  rename(session: Session, displayName: string): Promise<void>;
  /** A member of the room as the membership store has it, or undefined when it is not in the room (on any instance). */
  member(roomId: string, participantId: string): Promise<Member | undefined>;
}

/** What the control module asks of the moderation module during a join, a departure and a role change. */
export interface ModerationModule extends SignalingModule {
  readonly namespace: 'moderation';
  /** A joining session must wait: the room has its waiting room on, it is no moderator and was not accepted before. */
  mustWait(session: Session): Promise<boolean>;
  /**
   * Puts a joining session (display name and join time set) into the waiting room: state `waiting`,
   * `joined_waiting_room` to the moderators, then `in_waiting_room` to it.
   */
  enterWaitingRoom(session: Session, hub: RoomHub): Promise<void>;
  /** The session's socket closed while it waited or was accepted: the moderators see it go. */
  leaveWaitingRoom(session: Session, hub: RoomHub): Promise<void>;
  /** Whether participants of the room may raise their hands (no moderator disabled it). */
  raiseHandsEnabled(roomId: string): Promise<boolean>;
  /**
   * Shows a participant just made a moderator the waiting room as a joining moderator sees it:
   * `waiting_room_enabled` when it is on, then `joined_waiting_room` for each one waiting.
   */
  showWaitingRoom(session: Session): Promise<void>;
}

export function isModerationModule(module: SignalingModule | undefined): module is ModerationModule {
  return module?.namespace === 'moderation';
}
