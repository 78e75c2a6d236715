/**
 * The timer module (interface-spec.md §6 and §3, design.md §6 and §8): one timer per room, started
 * and stopped by moderators, with an optional ready check every participant may answer.
 *
 * The timer lives in the timer store (Redis with many instances), never in a hub, so any instance
 * can stop it. A countdown has no central scheduler: every instance with participants in the room
 * arms its expiry (on `started`, or when its hub opens while one runs), and when it fires each one
 * tries to take the timer; the store lets exactly one succeed, and only that one sends `expired`.
 */
import { randomUUID } from 'node:crypto';
import type {
  TimerErrorEvent,
  TimerJoinData,
  TimerPeerData,
  TimerStartCommand,
  TimerStopCommand,
  TimerStoppedEvent,
  TimerUpdateReadyStatusCommand,
} from '../../../../generated/signaling/types.js';
import type { RoomMessage } from '../../bus/signaling-bus.js';
import type { RoomHub } from '../../room-hub.js';
import type { Session } from '../../session.js';
import type { CommandPayload, ControlModule, ModuleDeps, SignalingModule } from '../module.js';
import type { RunningTimer, TimerStore } from './timer-store.js';
import { createLocalTimerStore } from './timer-store.local.js';
import { createRedisTimerStore } from './timer-store.redis.js';

const NAMESPACE = 'timer';

/** The latest instant RFC 3339 can write (a later `ends_at` would need a five-digit year). */
const LATEST_END_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

type ErrorCode = TimerErrorEvent['payload']['error'];
type StoppedFields = Omit<TimerStoppedEvent['payload'], 'message' | 'timer_id'>;

/** `store`: where the timer lives; Redis when `deps.redis` is set (tests give two modules one store, as two instances). */
export function createTimerModule(deps: ModuleDeps, store: TimerStore = defaultStore(deps)): SignalingModule {
  /**
   * The countdown expiries armed on each of this instance's hubs, by timer id. Usually one; a stale
   * read when a hub opens may arm an older timer beside the running one, whose expiry then finds
   * the timer gone and does nothing.
   */
  const expiries = new Map<RoomHub, Map<string, () => void>>();
  const iso = (ms: number) => new Date(ms).toISOString();

  const fail = (session: Session, error: ErrorCode) => session.send(NAMESPACE, { message: 'error', error });

  const publishStopped = (hub: RoomHub, timerId: string, fields: StoppedFields) =>
    hub.publish({ namespace: NAMESPACE, payload: { message: 'stopped', timer_id: timerId, ...fields }, audience: { to: 'room' } });

  function armExpiry(hub: RoomHub, timerId: string, endsAt: string): void {
    let armed = expiries.get(hub);
    if (armed?.has(timerId)) return;
    if (!armed) expiries.set(hub, (armed = new Map()));
    const cancel = deps.scheduler.at(Date.parse(endsAt), () => {
      disarm(hub, timerId);
      expire(hub, timerId).catch((err: unknown) =>
        deps.logger.error({ err, roomId: hub.roomId, timerId }, 'the countdown could not be expired'),
      );
    });
    armed.set(timerId, cancel);
  }

  function disarm(hub: RoomHub, timerId: string): void {
    const armed = expiries.get(hub);
    armed?.get(timerId)?.();
    armed?.delete(timerId);
    if (armed?.size === 0) expiries.delete(hub);
  }

  function disarmAll(hub: RoomHub): void {
    for (const cancel of expiries.get(hub)?.values() ?? []) cancel();
    expiries.delete(hub);
  }

  /** Every armed instance gets here; only the one whose take succeeds tells the room. */
  async function expire(hub: RoomHub, timerId: string): Promise<void> {
    if (await store.take(hub.roomId, timerId)) await publishStopped(hub, timerId, { kind: 'expired' });
  }

  async function start(session: Session, command: TimerStartCommand['payload'], hub: RoomHub): Promise<void> {
    if (session.role !== 'moderator') return fail(session, 'insufficient_permissions');
    const now = deps.scheduler.now();
    let endsAt: string | undefined;
    if (command.kind === 'countdown') {
      endsAt = countdownEnd(now, command.duration);
      if (endsAt === undefined) return fail(session, 'invalid_duration');
    }
    const timer: RunningTimer = {
      timer_id: randomUUID(),
      kind: command.kind,
      started_at: iso(now),
      ...(endsAt !== undefined ? { ends_at: endsAt } : {}),
      ...(command.title !== undefined ? { title: command.title } : {}),
      ...(command.style !== undefined ? { style: command.style } : {}),
      ready_check_enabled: command.enable_ready_check,
      creator: session.participant.id,
    };
    if (!(await store.create(hub.roomId, timer))) return fail(session, 'timer_already_running');
    await hub.publish({ namespace: NAMESPACE, payload: { message: 'started', ...publicFields(timer) }, audience: { to: 'room' } });
  }

  async function stop(session: Session, command: TimerStopCommand['payload'], hub: RoomHub): Promise<void> {
    if (session.role !== 'moderator') return fail(session, 'insufficient_permissions');
    // a stale or unknown id is no error: the timer it named has already stopped (or never ran)
    if (!(await store.take(hub.roomId, command.timer_id))) return;
    await publishStopped(hub, command.timer_id, {
      kind: 'by_moderator',
      participant_id: session.participant.id,
      ...(command.reason !== undefined ? { reason: command.reason } : {}),
    });
  }

  async function updateReadyStatus(session: Session, command: TimerUpdateReadyStatusCommand['payload'], hub: RoomHub): Promise<void> {
    const { timer_id, status } = command;
    // no timer, another timer, or no ready check: ignored, as the contract says
    if (!(await store.setReadyStatus(hub.roomId, timer_id, session.participant.id, status))) return;
    await hub.publish({
      namespace: NAMESPACE,
      payload: { message: 'updated_ready_status', timer_id, participant_id: session.participant.id, status },
      audience: { to: 'room' },
    });
    // the participant's `timer` peer data changed too: everyone's participant list shows it
    await (deps.modules().get('control') as ControlModule).publishUpdate(session, hub);
  }

  return {
    namespace: NAMESPACE,

    async handleCommand(session: Session, command: CommandPayload, hub: RoomHub) {
      switch (command.action) {
        case 'start':
          return start(session, command as TimerStartCommand['payload'], hub);
        case 'stop':
          return stop(session, command as TimerStopCommand['payload'], hub);
        case 'update_ready_status':
          return updateReadyStatus(session, command as TimerUpdateReadyStatusCommand['payload'], hub);
      }
    },

    async joinData(session: Session): Promise<TimerJoinData | undefined> {
      const { roomId } = session.room;
      const timer = await store.get(roomId);
      if (!timer) return undefined;
      if (!timer.ready_check_enabled) return publicFields(timer);
      const own = (await store.readyStatuses(roomId, [session.participant.id])).get(session.participant.id);
      return { ...publicFields(timer), ready_status: own ?? false };
    },

    async peerData(roomId: string, participantIds: readonly string[]): Promise<ReadonlyMap<string, TimerPeerData>> {
      const timer = await store.get(roomId);
      if (!timer?.ready_check_enabled) return new Map();
      const statuses = await store.readyStatuses(roomId, participantIds);
      return new Map(participantIds.map((id) => [id, { ready_status: statuses.get(id) ?? false }]));
    },

    async participantLeft(session: Session, hub: RoomHub, { roomEmpty }: { roomEmpty: boolean }) {
      // nobody is left to tell: the timer ends with the room, silently
      if (roomEmpty) return store.clear(hub.roomId);
      const leaver = session.participant.id;
      await store.deleteReadyStatus(hub.roomId, leaver);
      const timer = await store.get(hub.roomId);
      if (timer?.creator === leaver && (await store.take(hub.roomId, timer.timer_id))) {
        await publishStopped(hub, timer.timer_id, { kind: 'creator_left' });
      }
    },

    onRoomMessage(hub: RoomHub, message: RoomMessage) {
      const { payload } = message;
      if (payload.message === 'started' && typeof payload.ends_at === 'string') {
        armExpiry(hub, payload.timer_id as string, payload.ends_at);
      } else if (payload.message === 'stopped') {
        disarm(hub, payload.timer_id as string);
      }
    },

    async hubOpened(hub: RoomHub) {
      const timer = await store.get(hub.roomId);
      if (timer?.ends_at !== undefined) armExpiry(hub, timer.timer_id, timer.ends_at);
    },

    hubClosed(hub: RoomHub) {
      disarmAll(hub);
    },

    async close() {
      for (const hub of [...expiries.keys()]) disarmAll(hub);
    },
  };
}

function defaultStore(deps: ModuleDeps): TimerStore {
  return deps.redis ? createRedisTimerStore(deps.redis) : createLocalTimerStore();
}

/** A countdown's `ends_at`, or undefined when `duration` is not whole seconds ≥ 1 or ends past what RFC 3339 can write. */
function countdownEnd(nowMs: number, duration: number | undefined): string | undefined {
  if (duration === undefined || !Number.isInteger(duration) || duration < 1) return undefined;
  const endMs = nowMs + duration * 1000;
  return endMs <= LATEST_END_MS ? new Date(endMs).toISOString() : undefined;
}

/** The timer as `started` and `join_success` show it: without its creator. */
function publicFields({ creator: _, ...fields }: RunningTimer): Omit<RunningTimer, 'creator'> {
  return fields;
}
