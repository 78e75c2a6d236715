/**
 * The `control` namespace: joining the room and leaving it (docs/architecture.md §6), raised hands
 * and the moderator role. `join` names the participant and puts it into the room,
 * or into the waiting room (the moderation module's part); `enter_room` lets an accepted participant
 * in. Entering takes a place in the room's membership (atomically against the tariff's
 * `room_participant_limit`), tells the others `joined` and then answers `join_success` with the room
 * as it is (a failure before that gives the place back, so the connection's `internal_error` means
 * nothing changed); a closed socket, or a moderator's removal, takes the participant out again
 * (`left` with its reason) and lets every module clean up. Hands and roles: hands.ts, roles.ts.
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
import type {
  ControlGrantModeratorRoleCommand,
  ControlJoinCommand,
  ControlRevokeModeratorRoleCommand,
} from '../../../../generated/signaling/types.js';
import type { RoomHub } from '../../room-hub.js';
import { sendError } from '../../errors.js';
import type { Session } from '../../session.js';
import { isModerationModule } from '../moderation/moderation.module.js';
import type { ControlModule, LeaveReason, ModuleDeps, SignalingModule } from '../module.js';
import { listedRecently } from '../listed-recently.js';
import { changeMember, type ControlContext, type ControlError } from './control-context.js';
import { displayNameOf } from './display-name.js';
import { createHands } from './hands.js';
import { createCrashCleanup, type CrashCleanup } from './membership-sweep.js';
import { createLocalMembershipStore } from './membership.local.js';
import { createRedisMembershipStore } from './membership.redis.js';
import { createRedisWaitingRoomStore } from '../moderation/waiting-room.redis.js';
import { byJoinTime, memberOf, memberRecord, roomModules, viewOf, withPeerData } from './participant-view.js';
import { createRoles } from './roles.js';
import { createTimeLimit } from './time-limit.js';
import { announceJoin, announceLeave } from '../../webhooks.js';

/** Commands of a participant in the room only (before entering it: `not_yet_joined`). */
const IN_ROOM = new Set(['raise_hand', 'lower_hand', 'grant_moderator_role', 'revoke_moderator_role']);

export function createControlModule(deps: ModuleDeps): ControlModule {
  const membership = deps.redis ? createRedisMembershipStore(deps.redis, deps.liveness?.id) : createLocalMembershipStore();
  const timeLimit = createTimeLimit(deps, membership);
  /** Per joiner: the recent entrants its `join_success` listed, whose `joined` it must not get again. */
  const listed = listedRecently(() => deps.scheduler.now(), { arrival: 'joined', departure: 'left' });

  const fail = (session: Session, error: ControlError) => sendError(session, 'control', error);
  const nowIso = () => new Date(deps.scheduler.now()).toISOString();

  /** The moderation module, when the room's tariff enables it (without it there is no waiting room). */
  function moderationOf(session: Session) {
    const moderation = deps.modules().get('moderation');
    return isModerationModule(moderation) && session.room.tariff.enabled_modules.includes('moderation') ? moderation : undefined;
  }

  async function publishUpdate(session: Session, hub: RoomHub) {
    if (session.state !== 'joined') return;
    const view = await viewOf(roomModules(deps, session.room), session.room.roomId, memberRecord(session));
    await hub.publish({ namespace: 'control', payload: { message: 'update', ...view }, audience: { to: 'room', except: session.participant.id } });
  }

  // the waiting-room store is the moderation module's; this one reads and removes only the dead's records
  const crashCleanup: CrashCleanup | undefined =
    deps.redis && deps.liveness
      ? createCrashCleanup({
          deps,
          liveness: deps.liveness,
          members: membership.hosted!,
          waiting: createRedisWaitingRoomStore(deps.redis).hosted!,
          participantLeft: (session, hub, roomEmpty) => participantLeft(session, hub, roomEmpty),
        })
      : undefined;

  const context: ControlContext = { membership, moderationOf, publishUpdate, fail, now: nowIso };
  const hands = createHands(context);
  const roles = createRoles(context);

  async function join(session: Session, command: ControlJoinCommand['payload'], hub: RoomHub) {
    if (session.state !== 'connected') return fail(session, 'already_joined');
    const displayName = displayNameOf(command.display_name);
    if (displayName === undefined) return fail(session, 'invalid_username');
    session.displayName = displayName;
    session.avatarUrl = avatarOf(session, command.avatar_url);
    // the dead are out before the limit, the waiting room and the participant list are looked at
    await crashCleanup?.beforeJoin(session, hub);

    const moderation = moderationOf(session);
    if (moderation && (await moderation.mustWait(session))) {
      session.joinedAt = nowIso();
      return moderation.enterWaitingRoom(session, hub);
    }
    await enterRoom(session, hub);
  }

  async function enterRoom(session: Session, hub: RoomHub) {
    const { room, participant } = session;
    const previous = session.state;
    session.joinedAt = nowIso();
    const member = memberOf(session);
    const { record } = member;
    hub.hold(session);
    session.state = 'joined';
    let closesAtMs: number | undefined;
    let startedAtMs: number;
    const joinedAtMs = deps.scheduler.now();
    try {
      const outcome = await membership.join(room.roomId, member, room.tariff.quotas.room_participant_limit, joinedAtMs);
      if (!outcome.joined) {
        hub.drop(session);
        session.state = previous;
        return session.send('control', { message: 'join_blocked', reason: outcome.reason });
      }
      const modules = roomModules(deps, room);
      const others = byJoinTime((await membership.members(room.roomId)).filter((member) => member.id !== participant.id));
      // the joiner's own view (for `joined`) and the others' (for `join_success`) in one read per module
      const [[self, ...participants], moduleData] = await Promise.all([
        withPeerData(modules, room.roomId, [record, ...others]),
        joinDataOf(modules, session, hub),
      ]);
      startedAtMs = outcome.startedAtMs;
      closesAtMs = timeLimit.closesAt(room, startedAtMs);
      // the others first: until the newcomer itself is told, a failure gives the place back and changes nothing
      await hub.publish({ namespace: 'control', payload: { message: 'joined', ...self }, audience: { to: 'room', except: participant.id } });
      listed.remember(session, others);
      hub.release(session, {
        namespace: 'control',
        payload: {
          message: 'join_success',
          id: participant.id,
          display_name: record.control.display_name,
          ...(record.control.avatar_url !== undefined ? { avatar_url: record.control.avatar_url } : {}),
          role: session.role,
          is_room_owner: participant.isRoomOwner,
          closes_at: closesAtMs === undefined ? null : new Date(closesAtMs).toISOString(),
          tariff: room.tariff,
          ...(room.eventInfo ? { event_info: room.eventInfo } : {}),
          participants,
          ...moduleData,
        },
      });
    } catch (err) {
      hub.drop(session);
      session.state = previous;
      await membership.leave(room.roomId, participant.id).catch(() => undefined);
      throw err;
    }
    if (closesAtMs !== undefined) timeLimit.arm(room, closesAtMs);
    // the store began the room's session at this join's time only when the room was empty
    announceJoin(deps.webhooks, session, startedAtMs, startedAtMs === joinedAtMs);
  }

  /** Every room module's join-time data, by namespace (absent when a module has none for this session). */
  async function joinDataOf(modules: SignalingModule[], session: Session, hub: RoomHub): Promise<Record<string, unknown>> {
    const entries = await Promise.all(modules.map(async (module) => [module.namespace, await module.joinData?.(session, hub)] as const));
    return Object.fromEntries(entries.filter(([, data]) => data !== undefined));
  }

  /**
   * Each step is tried whatever happened to the one before: the others should see the participant
   * go, and the modules clean up after it (a timer it started stops), even when the membership
   * store failed (its record then stays, and the room counts as not empty) or the bus did.
   */
  async function leaveRoom(session: Session, hub: RoomHub, reason: LeaveReason) {
    const { id } = session.participant;
    const { roomId } = session.room;
    const left = await membership.leave(roomId, id).catch((err: unknown) => {
      deps.logger.error({ err, roomId, participantId: id }, 'a member was not removed from the room');
    });
    // out of the room, nobody's hand is up (one sent to the waiting room may come back)
    session.handIsUp = undefined;
    session.handUpdatedAt = undefined;
    // not removed: a sweep took this instance for dead and announced the departure (membership-sweep.ts)
    if (left && !left.removed) return participantLeft(session, hub, false);
    if (left) announceLeave(deps.webhooks, session, left.remaining === 0);
    try {
      await hub.publish({ namespace: 'control', payload: { message: 'left', id, reason }, audience: { to: 'room', except: id } });
    } finally {
      await participantLeft(session, hub, left?.remaining === 0);
    }
  }

  /** Lets every room module clean up after a participant; one module's failure does not stop the others. */
  async function participantLeft(session: Session, hub: RoomHub, roomEmpty: boolean) {
    for (const module of roomModules(deps, session.room)) {
      try {
        await module.participantLeft?.(session, hub, { roomEmpty });
      } catch (err) {
        deps.logger.error({ err, namespace: module.namespace, roomId: session.room.roomId }, 'a module failed on a departure');
      }
    }
  }

  return {
    namespace: 'control',

    async handleCommand(session, command, hub) {
      switch (command.action) {
        case 'join':
          return join(session, command as ControlJoinCommand['payload'], hub);
        case 'enter_room':
          if (session.state !== 'accepted') return fail(session, 'not_accepted_or_not_in_waiting_room');
          return enterRoom(session, hub);
      }
      if (!IN_ROOM.has(command.action)) throw new Error(`control has no command ${command.action}`);
      if (session.state !== 'joined') return fail(session, 'not_yet_joined');
      switch (command.action) {
        case 'raise_hand':
          return hands.raise(session, hub);
        case 'lower_hand':
          return hands.lower(session, hub);
        default:
          return roles.command(session, command as ControlGrantModeratorRoleCommand['payload'] | ControlRevokeModeratorRoleCommand['payload'], hub);
      }
    },

    async disconnect(session, hub, reason) {
      if (session.state === 'joined') return leaveRoom(session, hub, reason);
      if (session.state === 'waiting' || session.state === 'accepted') {
        await moderationOf(session)?.leaveWaitingRoom(session, hub);
        await participantLeft(session, hub, false);
      }
    },

    publishUpdate,

    lowerHand: (session, hub) => hands.lower(session, hub),

    rename: (session, displayName) => changeMember(context, session, { displayName }),

    member: (roomId, participantId) => membership.member(roomId, participantId),

    // a role order reaches the target's instance: carried out in the target session's order
    onRoomMessage(hub, message) {
      if (roles.isOrder(message)) roles.carryOut(hub, message);
    },

    withholds(session, message) {
      return roles.isOrder(message) || listed.withholds(session, message.payload);
    },

    async hubOpened(hub) {
      crashCleanup?.hubOpened(hub);
    },

    hubClosed(hub) {
      timeLimit.disarm(hub.roomId);
      crashCleanup?.hubClosed(hub);
    },

    async close() {
      crashCleanup?.close();
    },
  };
}

/**
 * The avatar others see: a registered user's own (from the profile); a guest or caller may bring
 * one with `join`, taken only when it is a web address.
 */
function avatarOf(session: Session, requested: string | undefined): string | undefined {
  if (session.participant.kind === 'user') return session.participant.avatarUrl;
  if (requested === undefined || !URL.canParse(requested)) return undefined;
  const { protocol } = new URL(requested);
  return protocol === 'https:' || protocol === 'http:' ? requested : undefined;
}
