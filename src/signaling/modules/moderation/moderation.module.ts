/**
 * The `moderation` namespace: the waiting room (design.md §6, reference opentalk.md §5.4). When a
 * room has its waiting room on, `join` puts every participant who is not a moderator (and was not
 * accepted before in this room session) here instead of into the room; the moderators see them
 * arrive and leave, and a moderator's `accept` lets one of them `enter_room`. The control module
 * drives the join and the departure and calls this module for the waiting-room part.
 *
 * Who may send what: `accept` — moderators only (else `insufficient_permissions`).
 * Events: `in_waiting_room` to the joiner; `joined_waiting_room` and `left_waiting_room` to the
 * moderators (not the arrival of one a joining moderator's waiting list named already); `accepted`
 * to the accepted participant.
 */
import type { ModerationJoinData } from '../../../../generated/signaling/types.js';
import type { RoomHub } from '../../room-hub.js';
import type { Session } from '../../session.js';
import { listedRecently } from '../listed-recently.js';
import { byJoinTime, memberRecord } from '../control/participant-view.js';
import type { ModuleDeps, SignalingModule } from '../module.js';
import { createLocalWaitingRoomStore } from './waiting-room.local.js';
import { createRedisWaitingRoomStore } from './waiting-room.redis.js';

/** What the control module asks of the waiting room during a join and a departure. */
export interface ModerationModule extends SignalingModule {
  readonly namespace: 'moderation';
  /** A joining session must wait: the room has a waiting room, it is no moderator and was not accepted before. */
  mustWait(session: Session): Promise<boolean>;
  /**
   * Puts a joining session (display name and join time set) into the waiting room: state `waiting`,
   * `joined_waiting_room` to the moderators, then `in_waiting_room` to it.
   */
  enterWaitingRoom(session: Session, hub: RoomHub): Promise<void>;
  /** The session's socket closed while it waited or was accepted: the moderators see it go. */
  leaveWaitingRoom(session: Session, hub: RoomHub): Promise<void>;
}

export function isModerationModule(module: SignalingModule | undefined): module is ModerationModule {
  return module?.namespace === 'moderation';
}

type ModerationError = 'insufficient_permissions' | 'not_in_waiting_room';

export function createModerationModule(deps: ModuleDeps): ModerationModule {
  const store = deps.redis ? createRedisWaitingRoomStore(deps.redis) : createLocalWaitingRoomStore();
  const fail = (session: Session, error: ModerationError) => session.send('moderation', { message: 'error', error });
  /** Per joining moderator: the recent arrivals its waiting list named, whose `joined_waiting_room` it must not get again. */
  const listed = listedRecently(() => deps.scheduler.now(), { arrival: 'joined_waiting_room', departure: 'left_waiting_room' });

  return {
    namespace: 'moderation',

    async handleCommand(session, command, hub) {
      if (command.action !== 'accept') throw new Error(`moderation has no command ${command.action}`);
      if (session.role !== 'moderator') return fail(session, 'insufficient_permissions');
      const target = command.target as string;
      if (!(await store.accept(session.room.roomId, target))) return fail(session, 'not_in_waiting_room');
      await hub.publish({ namespace: 'moderation', payload: { message: 'accepted' }, audience: { to: 'participant', id: target } });
      await hub.publish({ namespace: 'moderation', payload: { message: 'left_waiting_room', id: target }, audience: { to: 'moderators' } });
    },

    // `accepted` reaches the target's instance: from now on it may enter the room
    onRoomMessage(hub, message) {
      if (message.payload.message !== 'accepted' || message.audience.to !== 'participant') return;
      const session = hub.sessions.get(message.audience.id);
      if (session?.state === 'waiting') session.state = 'accepted';
    },

    async joinData(session): Promise<ModerationJoinData | undefined> {
      if (session.role !== 'moderator') return undefined;
      const waiting = byJoinTime(await store.waiting(session.room.roomId));
      listed.remember(session, waiting);
      return { waiting_room_enabled: session.room.waitingRoom, waiting_room_participants: waiting };
    },

    withholds(session, message) {
      return listed.withholds(session, message.payload);
    },

    async participantLeft(session, _hub, { roomEmpty }) {
      if (roomEmpty) await store.forgetAccepted(session.room.roomId);
    },

    async mustWait(session) {
      if (!session.room.waitingRoom || session.role === 'moderator') return false;
      return !(await store.isAccepted(session.room.roomId, session.participant.id));
    },

    async enterWaitingRoom(session, hub) {
      const record = memberRecord(session);
      await store.add(session.room.roomId, record);
      // waiting from now on, so that an `accepted` takes effect however soon it comes; yet the
      // moderators are told first (a failure until then takes the joiner out again and changes
      // nothing), and what reaches the joiner meanwhile follows its `in_waiting_room`
      hub.hold(session);
      session.state = 'waiting';
      try {
        await hub.publish({ namespace: 'moderation', payload: { message: 'joined_waiting_room', ...record }, audience: { to: 'moderators' } });
      } catch (err) {
        hub.drop(session);
        session.state = 'connected';
        await store.remove(session.room.roomId, record.id).catch(() => undefined);
        throw err;
      }
      hub.release(session, { namespace: 'moderation', payload: { message: 'in_waiting_room' } });
    },

    async leaveWaitingRoom(session, hub) {
      const { id } = session.participant;
      // false when a moderator accepted it meanwhile: the moderators saw it leave then
      if (!(await store.remove(session.room.roomId, id))) return;
      await hub.publish({ namespace: 'moderation', payload: { message: 'left_waiting_room', id }, audience: { to: 'moderators' } });
    },
  };
}
