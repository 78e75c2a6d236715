/**
 * The `control` namespace: joining the room and leaving it (docs/architecture.md §6), raised hands
 * and the moderator role. `join` names the participant and puts it into the room,
 * or into the waiting room (the moderation module's part); `enter_room` lets an accepted participant
 * in. Entering takes a place in the room's membership (atomically against the tariff's
 * `room_participant_limit`), tells the others `joined` and then answers `join_success` with the room
 * as it is (a failure before that gives the place back, so the connection's `internal_error` means
 * nothing changed); a closed socket, or a moderator's removal, takes the participant out again
 * (`left` with its reason) and lets every module clean up. Joining: entering.ts; leaving:
 * departure.ts; hands and roles: hands.ts, roles.ts.
 * Participants of instances that died (Redis only): membership-sweep.ts, before each `join` and
 * periodically for the rooms this instance hosts.
 *
 * The connection runs a socket's commands, the tasks queued for it (a moderator's orders) and, at
 * last, its departure one after another, so the session's state is always the outcome of the
 * previous step.
 *
 * Who may send what: `join` — once, on a new socket (else `already_joined`); `enter_room` — only
 * after a moderator's `accept` (else `not_accepted_or_not_in_waiting_room`); `raise_hand`,
 * `lower_hand` — anyone in the room; `grant_moderator_role`, `revoke_moderator_role` — moderators
 * in the room (else `insufficient_permissions`); the last four before entering: `not_yet_joined`.
 */
import type { ControlGrantModeratorRoleCommand, ControlJoinCommand, ControlRevokeModeratorRoleCommand } from '../../../../generated/signaling/types.js';
import type { HubEvent, RoomHub } from '../../room-hub.js';
import { memberRecord } from '../../room-state/member-records.js';
import type { Session } from '../../session.js';
import { listedRecently } from '../listed-recently.js';
import { isModerationModule, type CommandPayload, type ControlModule, type ModerationModule, type ModuleDeps } from '../module.js';
import { changeMember, type ControlParts } from './control-context.js';
import { disconnect, participantLeft } from './departure.js';
import { enterRoom, join } from './entering.js';
import { createHands, type Hands } from './hands.js';
import { createCrashCleanup, type CrashCleanup } from './membership-sweep.js';
import { roomModules, viewOf } from './participant-view.js';
import { createRoles, type Roles } from './roles.js';
import { createTimeLimit } from './time-limit.js';
import { sendError } from '../../errors.js';

/** Commands of a participant in the room only (before entering it: `not_yet_joined`). */
const IN_ROOM = new Set(['raise_hand', 'lower_hand', 'grant_moderator_role', 'revoke_moderator_role']);

export function createControlModule(deps: ModuleDeps): ControlModule {
  const parts = controlParts(deps);
  return {
    namespace: 'control',
    handleCommand: (session, command, hub) => handleCommand(parts, session, command, hub),
    disconnect: (session, hub, reason) => disconnect(parts, session, hub, reason),
    publishUpdate: parts.publishUpdate,
    lowerHand: (session, hub) => parts.hands.lower(session, hub),
    rename: (session, displayName) => changeMember(parts, session, { displayName }),
    member: (roomId, participantId) => parts.membership.member(roomId, participantId),
    onHubEvent: (event) => onHubEvent(parts, event),
    withholds: (session, message) => parts.roles.isOrder(message) || parts.listed.withholds(session, message.payload),
    async close() {
      parts.crashCleanup?.close();
    },
  };
}

/** The control module's stores and parts, with the hands and roles it delegates to. */
function controlParts(deps: ModuleDeps): ControlParts & { hands: Hands; roles: Roles } {
  const { membership } = deps.stores;
  const parts: ControlParts = {
    deps,
    membership,
    timeLimit: createTimeLimit(deps, membership),
    listed: listedRecently(() => deps.scheduler.now(), { arrival: 'joined', departure: 'left' }),
    moderationOf: (session) => moderationOf(deps, session),
    publishUpdate: (session, hub) => publishUpdate(deps, session, hub),
    fail: (session, error) => sendError(session, 'control', error),
    now: () => new Date(deps.scheduler.now()).toISOString(),
  };
  parts.crashCleanup = crashCleanupOf(parts);
  return { ...parts, hands: createHands(parts), roles: createRoles(parts) };
}

/** With Redis (this instance's liveness, stores that record each entry's host): the cleanup after dead instances. */
function crashCleanupOf(parts: ControlParts): CrashCleanup | undefined {
  const { deps } = parts;
  const [members, waiting] = [parts.membership.hosted, deps.stores.waitingRoom.hosted];
  if (!deps.liveness || !members || !waiting) return undefined;
  return createCrashCleanup({
    deps,
    liveness: deps.liveness,
    members,
    waiting,
    participantLeft: (session, hub, roomEmpty) => participantLeft(parts, session, hub, roomEmpty),
  });
}

/** The moderation module, when the room's tariff enables it (without it there is no waiting room). */
function moderationOf(deps: ModuleDeps, session: Session): ModerationModule | undefined {
  const moderation = deps.modules().get('moderation');
  return isModerationModule(moderation) && session.room.tariff.enabled_modules.includes('moderation') ? moderation : undefined;
}

async function publishUpdate(deps: ModuleDeps, session: Session, hub: RoomHub): Promise<void> {
  if (session.state !== 'joined') return;
  const view = await viewOf(roomModules(deps, session.room), session.room.roomId, memberRecord(session));
  await hub.publish({ namespace: 'control', payload: { message: 'update', ...view }, audience: { to: 'room', except: session.participant.id } });
}

function onHubEvent(parts: ControlParts & { roles: Roles }, event: HubEvent): void {
  if (event.type === 'message') {
    // a role order reaches the target's instance: carried out in the target session's order
    if (parts.roles.isOrder(event.message)) parts.roles.carryOut(event.hub, event.message);
    else parts.listed.delivered(event.hub, event.message.payload);
    return;
  }
  if (event.type === 'closed') parts.timeLimit.disarm(event.hub.roomId);
  parts.crashCleanup?.onHubEvent(event);
}

async function handleCommand(parts: ControlParts & { hands: Hands; roles: Roles }, session: Session, command: CommandPayload, hub: RoomHub): Promise<void> {
  switch (command.action) {
    case 'join':
      return join(parts, session, command as ControlJoinCommand['payload'], hub);
    case 'enter_room':
      if (session.state !== 'accepted') return parts.fail(session, 'not_accepted_or_not_in_waiting_room');
      return enterRoom(parts, session, hub);
  }
  if (!IN_ROOM.has(command.action)) throw new Error(`control has no command ${command.action}`);
  if (session.state !== 'joined') return parts.fail(session, 'not_yet_joined');
  switch (command.action) {
    case 'raise_hand':
      return parts.hands.raise(session, hub);
    case 'lower_hand':
      return parts.hands.lower(session, hub);
    default:
      return parts.roles.command(session, command as ControlGrantModeratorRoleCommand['payload'] | ControlRevokeModeratorRoleCommand['payload'], hub);
  }
}
