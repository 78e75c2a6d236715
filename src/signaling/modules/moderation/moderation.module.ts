/**
 * The `moderation` namespace (docs/architecture.md §6): the waiting room, and the
 * moderators' tools (waiting-room-switch.ts, removals.ts, display-names.ts, raised-hands.ts). When a
 * room has its waiting room on (its setting, unless a moderator switched it for the meeting until
 * the room empties), `join` puts every participant who is not a moderator (and was not accepted
 * before in this room session) here instead of into the room; the moderators see them arrive and
 * leave, and a moderator's `accept` (or switching the waiting room off) lets them `enter_room`.
 * The control module drives the join and the departure and calls this module for the waiting-room
 * part; this module calls the control module to take participants out of the room, to rename them
 * and to lower their hands.
 *
 * Who may send what: every command — moderators only (else `insufficient_permissions`).
 * Events: `in_waiting_room` to the joiner; `joined_waiting_room` and `left_waiting_room` to the
 * moderators (not the arrival of one a joining moderator's waiting list named already); `accepted`
 * to the accepted participant; the tools' events (see their files). Join data: whether hands may be
 * raised, for everyone; the waiting room, for moderators.
 */
import type {
  ModerationBanCommand,
  ModerationChangeDisplayNameCommand,
  ModerationDebriefCommand,
  ModerationJoinData,
  ModerationKickCommand,
  ModerationResetRaisedHandsCommand,
  ModerationSendToWaitingRoomCommand,
} from '../../../../generated/signaling/types.js';
import type { RoomHub } from '../../room-hub.js';
import { sendError } from '../../errors.js';
import type { EventPayload, Session } from '../../session.js';
import { listedRecently } from '../listed-recently.js';
import { byJoinTime, memberRecord } from '../control/participant-view.js';
import type { ControlModule, ModuleDeps, SignalingModule } from '../module.js';
import { createDisplayNames } from './display-names.js';
import type { ModerationContext, ModerationError } from './moderation-context.js';
import { createRaisedHands } from './raised-hands.js';
import { createRemovals } from './removals.js';
import { waitingRoomOn } from './room-settings-store.js';
import { createLocalRoomSettingsStore } from './room-settings.local.js';
import { createRedisRoomSettingsStore } from './room-settings.redis.js';
import { createWaitingRoomSwitch } from './waiting-room-switch.js';
import { createLocalWaitingRoomStore } from './waiting-room.local.js';
import { createRedisWaitingRoomStore } from './waiting-room.redis.js';
import { participantData } from '../../webhooks.js';

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

export function createModerationModule(deps: ModuleDeps): ModerationModule {
  const waitingRoom = deps.redis ? createRedisWaitingRoomStore(deps.redis, deps.liveness?.id) : createLocalWaitingRoomStore();
  const settings = deps.redis ? createRedisRoomSettingsStore(deps.redis) : createLocalRoomSettingsStore();
  const fail = (session: Session, error: ModerationError) => sendError(session, 'moderation', error);
  /** Per moderator: the recent arrivals its waiting list named, whose `joined_waiting_room` it must not get again. */
  const listed = listedRecently(() => deps.scheduler.now(), { arrival: 'joined_waiting_room', departure: 'left_waiting_room' });

  /** Whether the session's room has its waiting room on now. */
  const waitingRoomIsOn = async (session: Session) => waitingRoomOn(await settings.read(session.room.roomId), session.room.waitingRoom);

  async function admit(roomId: string, target: string, hub: RoomHub) {
    if (!(await waitingRoom.accept(roomId, target))) return false;
    await hub.publish({ namespace: 'moderation', payload: { message: 'accepted' }, audience: { to: 'participant', id: target } });
    await hub.publish({ namespace: 'moderation', payload: { message: 'left_waiting_room', id: target }, audience: { to: 'moderators' } });
    return true;
  }

  async function enterWaitingRoom(session: Session, hub: RoomHub, answer: EventPayload) {
    const record = memberRecord(session);
    await waitingRoom.add(session.room.roomId, record);
    // waiting from now on, so that an `accepted` takes effect however soon it comes; yet the
    // moderators are told first (a failure until then takes the joiner out again and changes
    // nothing), and what reaches the joiner meanwhile follows its answer
    hub.hold(session);
    session.state = 'waiting';
    try {
      await hub.publish({ namespace: 'moderation', payload: { message: 'joined_waiting_room', ...record }, audience: { to: 'moderators' } });
    } catch (err) {
      hub.drop(session);
      session.state = 'connected';
      await waitingRoom.remove(session.room.roomId, record.id).catch(() => undefined);
      throw err;
    }
    hub.release(session, { namespace: 'moderation', payload: answer });
    deps.webhooks?.emit(session.room, 'waiting_room.entered', participantData(session), `waiting_room.entered:${session.room.roomId}:${record.id}:${session.joinedAt}`);
    await admitIfSwitchedOff(session, record.id, hub);
  }

  /**
   * A moderator may have switched the waiting room off after this participant found it on, and let
   * those waiting in before it was listed: then it lets itself in (of the two, one wins). It waits
   * already, so a failure here is logged, not answered: a moderator can still let it in.
   */
  async function admitIfSwitchedOff(session: Session, id: string, hub: RoomHub) {
    try {
      if (!(await waitingRoomIsOn(session))) await admit(session.room.roomId, id, hub);
    } catch (err) {
      deps.logger.error({ err, roomId: session.room.roomId, participantId: id }, 'a participant waiting as the waiting room went off was not let in');
    }
  }

  const context: ModerationContext = {
    deps,
    waitingRoom,
    settings,
    control: () => deps.modules().get('control') as ControlModule,
    fail,
    enterWaitingRoom,
    admit,
  };
  const removals = createRemovals(context);
  const displayNames = createDisplayNames(context);
  const raisedHands = createRaisedHands(context);
  const waitingRoomSwitch = createWaitingRoomSwitch(context);

  async function accept(session: Session, target: string, hub: RoomHub) {
    if (session.role !== 'moderator') return fail(session, 'insufficient_permissions');
    if (!(await admit(session.room.roomId, target, hub))) return fail(session, 'not_in_waiting_room');
  }

  return {
    namespace: 'moderation',

    async handleCommand(session, command, hub) {
      switch (command.action) {
        case 'accept':
          return accept(session, command.target as string, hub);
        case 'enable_waiting_room':
        case 'disable_waiting_room':
          return waitingRoomSwitch.setEnabled(session, command.action === 'enable_waiting_room', hub);
        case 'change_display_name':
          return displayNames.change(session, command as ModerationChangeDisplayNameCommand['payload'], hub);
        case 'kick':
          return removals.kick(session, command as ModerationKickCommand['payload'], hub);
        case 'ban':
          return removals.ban(session, command as ModerationBanCommand['payload'], hub);
        case 'send_to_waiting_room':
          return removals.sendToWaitingRoom(session, command as ModerationSendToWaitingRoomCommand['payload'], hub);
        case 'debrief':
          return removals.debrief(session, command as ModerationDebriefCommand['payload'], hub);
        case 'reset_raised_hands':
          return raisedHands.reset(session, command as ModerationResetRaisedHandsCommand['payload'], hub);
        case 'enable_raise_hands':
        case 'disable_raise_hands':
          return raisedHands.setEnabled(session, command.action === 'enable_raise_hands', hub);
        default:
          throw new Error(`moderation has no command ${command.action}`);
      }
    },

    onRoomMessage(hub, message) {
      if (removals.isOrder(message)) return removals.carryOut(hub, message);
      if (displayNames.isOrder(message)) return displayNames.carryOut(hub, message);
      raisedHands.onRoomMessage(hub, message);
      // `accepted` reaches the target's instance: from now on it may enter the room
      if (message.payload.message !== 'accepted' || message.audience.to !== 'participant') return;
      const session = hub.sessions.get(message.audience.id);
      if (session?.state === 'waiting') session.state = 'accepted';
    },

    async joinData(session): Promise<ModerationJoinData> {
      const { roomId } = session.room;
      const moderator = session.role === 'moderator';
      const [roomSettings, waiting] = await Promise.all([settings.read(roomId), moderator ? waitingRoom.waiting(roomId) : []]);
      const { raiseHandsEnabled } = roomSettings;
      if (!moderator) return { raise_hands_enabled: raiseHandsEnabled };
      const participants = byJoinTime(waiting);
      listed.remember(session, participants);
      return {
        raise_hands_enabled: raiseHandsEnabled,
        waiting_room_enabled: waitingRoomOn(roomSettings, session.room.waitingRoom),
        waiting_room_participants: participants,
      };
    },

    withholds(session, message) {
      // orders are for the instances, and a hand reset is for those in the room
      if (removals.isOrder(message) || displayNames.isOrder(message)) return true;
      if (message.payload.message === 'raised_hand_reset_by_moderator' && session.state !== 'joined') return true;
      return listed.withholds(session, message.payload);
    },

    async participantLeft(session, _hub, { roomEmpty }) {
      if (!roomEmpty) return;
      const { roomId } = session.room;
      await Promise.all([waitingRoom.forgetAccepted(roomId), settings.forget(roomId)]);
    },

    async mustWait(session) {
      if (session.role === 'moderator') return false;
      if (!(await waitingRoomIsOn(session))) return false;
      return !(await waitingRoom.isAccepted(session.room.roomId, session.participant.id));
    },

    enterWaitingRoom: (session, hub) => enterWaitingRoom(session, hub, { message: 'in_waiting_room' }),

    async leaveWaitingRoom(session, hub) {
      const { id } = session.participant;
      // false when a moderator accepted it meanwhile: the moderators saw it leave then
      if (!(await waitingRoom.remove(session.room.roomId, id))) return;
      await hub.publish({ namespace: 'moderation', payload: { message: 'left_waiting_room', id }, audience: { to: 'moderators' } });
    },

    async raiseHandsEnabled(roomId) {
      return (await settings.read(roomId)).raiseHandsEnabled;
    },

    async showWaitingRoom(session) {
      const { roomId } = session.room;
      const [on, waiting] = await Promise.all([waitingRoomIsOn(session), waitingRoom.waiting(roomId)]);
      if (on) session.send('moderation', { message: 'waiting_room_enabled' });
      const participants = byJoinTime(waiting);
      listed.remember(session, participants);
      for (const participant of participants) session.send('moderation', { message: 'joined_waiting_room', ...participant });
    },
  };
}
