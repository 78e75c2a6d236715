/**
 * The `moderation` namespace (docs/architecture.md §6): the waiting room, and the
 * moderators' tools (waiting-room-switch.ts, removals.ts, display-names.ts, raised-hands.ts). When a
 * room has its waiting room on (its setting, unless a moderator switched it for the meeting until
 * the room empties), `join` puts every participant who is not a moderator (and was not accepted
 * before in this room session) here instead of into the room; the moderators see them arrive and
 * leave, and a moderator's `accept` (or switching the waiting room off) lets them `enter_room`.
 * The control module drives the join and the departure and calls this module for the waiting-room
 * part; this module calls the control module to take participants out of the room, to rename them
 * and to lower their hands. Each knows the other by its port in module.ts only, and both keep the
 * room's state in the stores of room-state/.
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
  ModerationKickCommand,
  ModerationResetRaisedHandsCommand,
  ModerationSendToWaitingRoomCommand,
} from '../../../../generated/signaling/types.js';
import type { RoomMessage } from '../../bus/signaling-bus.js';
import type { HubEvent, RoomHub } from '../../room-hub.js';
import type { Session } from '../../session.js';
import { listedRecently } from '../listed-recently.js';
import type { CommandPayload, ControlModule, ModerationModule, ModuleDeps } from '../module.js';
import { createDisplayNames, type DisplayNames } from './display-names.js';
import type { ModerationParts } from './moderation-context.js';
import { createRaisedHands, type RaisedHands } from './raised-hands.js';
import { createRemovals, type Removals } from './removals.js';
import { createWaitingRoomSwitch, type WaitingRoomSwitch } from './waiting-room-switch.js';
import { admit, enterWaitingRoom, joinData, leaveWaitingRoom, mustWait, showWaitingRoom } from './waiting-room.js';
import { sendError } from '../../errors.js';

/** The module's parts with the moderators' tools it delegates to. */
interface Moderation extends ModerationParts {
  removals: Removals;
  displayNames: DisplayNames;
  raisedHands: RaisedHands;
  waitingRoomSwitch: WaitingRoomSwitch;
}

export function createModerationModule(deps: ModuleDeps): ModerationModule {
  const parts = moderationParts(deps);
  return {
    namespace: 'moderation',
    handleCommand: (session, command, hub) => handleCommand(parts, session, command, hub),
    onHubEvent: (event) => onHubEvent(parts, event),
    joinData: (session) => joinData(parts, session),
    withholds: (session, message) => withholds(parts, session, message),
    async participantLeft(session, _hub, { roomEmpty }) {
      if (!roomEmpty) return;
      const { roomId } = session.room;
      await Promise.all([parts.waitingRoom.forgetAccepted(roomId), parts.settings.forget(roomId)]);
    },
    mustWait: (session) => mustWait(parts, session),
    enterWaitingRoom: (session, hub) => enterWaitingRoom(parts, session, hub, { message: 'in_waiting_room' }),
    leaveWaitingRoom: (session, hub) => leaveWaitingRoom(parts, session, hub),
    raiseHandsEnabled: async (roomId) => (await parts.settings.read(roomId)).raiseHandsEnabled,
    showWaitingRoom: (session) => showWaitingRoom(parts, session),
  };
}

function moderationParts(deps: ModuleDeps): Moderation {
  const parts: ModerationParts = {
    deps,
    roomEntry: deps.roomEntry,
    waitingRoom: deps.stores.waitingRoom,
    settings: deps.stores.settings,
    control: () => deps.modules().get('control') as ControlModule,
    fail: (session, error) => sendError(session, 'moderation', error),
    enterWaitingRoom: (session, hub, answer) => enterWaitingRoom(parts, session, hub, answer),
    admit: (roomId, target, hub) => admit(parts, roomId, target, hub),
    listed: listedRecently(() => deps.scheduler.now(), { arrival: 'joined_waiting_room', departure: 'left_waiting_room' }),
  };
  return {
    ...parts,
    removals: createRemovals(parts),
    displayNames: createDisplayNames(parts),
    raisedHands: createRaisedHands(parts),
    waitingRoomSwitch: createWaitingRoomSwitch(parts),
  };
}

async function accept(parts: ModerationParts, session: Session, target: string, hub: RoomHub): Promise<void> {
  if (session.role !== 'moderator') return parts.fail(session, 'insufficient_permissions');
  if (!(await parts.admit(session.room.roomId, target, hub))) return parts.fail(session, 'not_in_waiting_room');
}

async function handleCommand(parts: Moderation, session: Session, command: CommandPayload, hub: RoomHub): Promise<void> {
  switch (command.action) {
    case 'accept':
      return accept(parts, session, command.target as string, hub);
    case 'enable_waiting_room':
    case 'disable_waiting_room':
      return parts.waitingRoomSwitch.setEnabled(session, command.action === 'enable_waiting_room', hub);
    case 'change_display_name':
      return parts.displayNames.change(session, command as ModerationChangeDisplayNameCommand['payload'], hub);
    case 'kick':
      return parts.removals.kick(session, command as ModerationKickCommand['payload'], hub);
    case 'ban':
      return parts.removals.ban(session, command as ModerationBanCommand['payload'], hub);
    case 'send_to_waiting_room':
      return parts.removals.sendToWaitingRoom(session, command as ModerationSendToWaitingRoomCommand['payload'], hub);
    case 'debrief':
      return parts.removals.debrief(session, command as ModerationDebriefCommand['payload'], hub);
    case 'reset_raised_hands':
      return parts.raisedHands.reset(session, command as ModerationResetRaisedHandsCommand['payload'], hub);
    case 'enable_raise_hands':
    case 'disable_raise_hands':
      return parts.raisedHands.setEnabled(session, command.action === 'enable_raise_hands', hub);
    default:
      throw new Error(`moderation has no command ${command.action}`);
  }
}

function onHubEvent(parts: Moderation, event: HubEvent): void {
  if (event.type !== 'message') return;
  const { hub, message } = event;
  if (parts.removals.isOrder(message)) return parts.removals.carryOut(hub, message);
  if (parts.displayNames.isOrder(message)) return parts.displayNames.carryOut(hub, message);
  parts.raisedHands.lowerHandsConcerned(hub, message);
  // `accepted` reaches the target's instance: from now on it may enter the room
  if (message.payload.message !== 'accepted' || message.audience.to !== 'participant') return;
  const session = hub.sessions.get(message.audience.id);
  if (session?.state === 'waiting') session.state = 'accepted';
}

function withholds(parts: Moderation, session: Session, message: RoomMessage): boolean {
  // orders are for the instances, and a hand reset is for those in the room
  if (parts.removals.isOrder(message) || parts.displayNames.isOrder(message)) return true;
  if (message.payload.message === 'raised_hand_reset_by_moderator' && session.state !== 'joined') return true;
  return parts.listed.withholds(session, message.payload);
}
