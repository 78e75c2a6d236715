/**
 * The timer module (the contract, docs/architecture.md §6, docs/decisions.md): one timer per room, started
 * and stopped by moderators, with an optional ready check every participant may answer.
 *
 * The timer lives in the timer store (Redis with many instances), never in a hub, so any instance
 * can stop it. A countdown has no central scheduler: every instance with participants in the room
 * arms its expiry (on `started`, and when a participant joins here while one runs: every joined
 * session of the hub went through `joinData`), and when it fires each one tries to take the timer;
 * the store lets exactly one succeed, and only that one sends `expired`. An expiry the store or the
 * bus failed is tried again a few times while the hub is open; after that, the next participant to
 * join on any instance arms it again.
 *
 * The timer ends when it expires, is stopped, or its creator leaves; since the creator is in the
 * room while it runs, a room that empties has no timer left. (Only a crash leaves one: the Redis
 * store's keys expire on their own.)
 */
import { randomUUID } from 'node:crypto';
import type {
  TimerErrorEvent,
  TimerJoinData,
  TimerPeerData,
  TimerStartCommand,
  TimerStopCommand,
  TimerUpdateReadyStatusCommand,
} from '../../../../generated/signaling/types.js';
import type { RoomMessage } from '../../bus/signaling-bus.js';
import type { HubEvent, RoomHub } from '../../room-hub.js';
import type { Session } from '../../session.js';
import type { CommandPayload, ControlModule, ModuleDeps, SignalingModule } from '../module.js';
import { createExpiries, type Expiries } from './expiry.js';
import { NAMESPACE, publishStopped } from './stopped.js';
import type { RunningTimer, TimerStore } from './timer-store.js';
import { sendError } from '../../errors.js';

/** The latest instant RFC 3339 can write (a later `ends_at` would need a five-digit year). */
const LATEST_END_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

type ErrorCode = TimerErrorEvent['payload']['error'];

/** What the module's functions work with. */
interface TimerParts {
  deps: ModuleDeps;
  store: TimerStore;
  expiries: Expiries;
  /**
   * Per joiner, until its first timer event: the timer its `join_success` showed (null: none). That
   * timer's `started` it must not get again, and another timer's `stopped` not at all: that timer
   * ended between the join's read and the arrival of its `stopped` (through Redis), so the joiner
   * never knew it ran.
   */
  shownAtJoin: WeakMap<Session, string | null>;
}

export function createTimerModule(deps: ModuleDeps): SignalingModule {
  const store = deps.stores.timer;
  const parts: TimerParts = { deps, store, expiries: createExpiries(deps, store), shownAtJoin: new WeakMap() };
  return {
    namespace: NAMESPACE,
    handleCommand: (session, command, hub) => handleCommand(parts, session, command, hub),
    joinData: (session, hub) => joinData(parts, session, hub),
    peerData: (roomId, participantIds) => peerData(store, roomId, participantIds),
    participantLeft: (session, hub) => participantLeft(parts, session, hub),
    withholds: (session, message) => withholds(parts, session, message),
    onHubEvent: (event) => onHubEvent(parts, event),
    close: async () => parts.expiries.disarmAll(),
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

const fail = (session: Session, error: ErrorCode) => sendError(session, NAMESPACE, error);

async function handleCommand(parts: TimerParts, session: Session, command: CommandPayload, hub: RoomHub): Promise<void> {
  switch (command.action) {
    case 'start':
      return start(parts, session, command as TimerStartCommand['payload'], hub);
    case 'stop':
      return stop(parts, session, command as TimerStopCommand['payload'], hub);
    case 'update_ready_status':
      return updateReadyStatus(parts, session, command as TimerUpdateReadyStatusCommand['payload'], hub);
  }
}

async function start({ deps, store }: TimerParts, session: Session, command: TimerStartCommand['payload'], hub: RoomHub): Promise<void> {
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
  deps.webhooks?.emit(
    session.room,
    'timer.started',
    {
      room_id: session.room.roomId,
      timer_id: timer.timer_id,
      kind: timer.kind,
      ...(endsAt !== undefined ? { ends_at: endsAt } : {}),
      ...(timer.title !== undefined ? { title: timer.title } : {}),
    },
    `timer.started:${timer.timer_id}`,
  );
  await hub.publish({ namespace: NAMESPACE, payload: { message: 'started', ...publicFields(timer) }, audience: { to: 'room' } });
}

async function stop({ deps, store }: TimerParts, session: Session, command: TimerStopCommand['payload'], hub: RoomHub): Promise<void> {
  if (session.role !== 'moderator') return fail(session, 'insufficient_permissions');
  // a stale or unknown id is no error: the timer it named has already stopped (or never ran)
  if (!(await store.take(hub.roomId, command.timer_id))) return;
  await publishStopped(deps, hub, session.room, command.timer_id, {
    kind: 'by_moderator',
    participant_id: session.participant.id,
    ...(command.reason !== undefined ? { reason: command.reason } : {}),
  });
}

async function updateReadyStatus(
  { deps, store }: TimerParts,
  session: Session,
  command: TimerUpdateReadyStatusCommand['payload'],
  hub: RoomHub,
): Promise<void> {
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

async function joinData({ store, expiries, shownAtJoin }: TimerParts, session: Session, hub: RoomHub): Promise<TimerJoinData | undefined> {
  const { roomId } = session.room;
  const timer = await store.get(roomId);
  if (!timer) {
    shownAtJoin.set(session, null);
    return undefined;
  }
  // armed already unless this is the hub's first participant since the start, or the expiry failed for good
  if (timer.ends_at !== undefined) expiries.arm(hub, timer.timer_id, timer.ends_at);
  // its `started` may still be on the way to this joiner (through Redis): the joiner knows it now
  shownAtJoin.set(session, timer.timer_id);
  if (!timer.ready_check_enabled) return publicFields(timer);
  const own = (await store.readyStatuses(roomId, [session.participant.id])).get(session.participant.id);
  return { ...publicFields(timer), ready_status: own ?? false };
}

async function peerData(store: TimerStore, roomId: string, participantIds: readonly string[]): Promise<ReadonlyMap<string, TimerPeerData>> {
  const timer = await store.get(roomId);
  if (!timer?.ready_check_enabled) return new Map();
  const statuses = await store.readyStatuses(roomId, participantIds);
  return new Map(participantIds.map((id) => [id, { ready_status: statuses.get(id) ?? false }]));
}

async function participantLeft({ deps, store }: TimerParts, session: Session, hub: RoomHub): Promise<void> {
  // a participant leaving the waiting room has no status and started no timer (the control
  // module's departure from the room still has the session `joined` here)
  if (session.state !== 'joined') return;
  const leaver = session.participant.id;
  await store.deleteReadyStatus(hub.roomId, leaver);
  const timer = await store.get(hub.roomId);
  // told even when the room is now empty: one joining at this moment may have been shown the timer.
  // Only the creator's own timer is taken: a room that emptied may already have a newcomer's.
  if (timer?.creator === leaver && (await store.take(hub.roomId, timer.timer_id))) {
    await publishStopped(deps, hub, session.room, timer.timer_id, { kind: 'creator_left' });
  }
}

function withholds({ shownAtJoin }: TimerParts, session: Session, message: RoomMessage): boolean {
  const shown = shownAtJoin.get(session);
  const event = message.payload.message;
  if (shown === undefined || (event !== 'started' && event !== 'stopped')) return false;
  shownAtJoin.delete(session); // only the first `started` or `stopped` after the join can be one the read overtook
  return event === 'started' ? message.payload.timer_id === shown : message.payload.timer_id !== shown;
}

function onHubEvent({ expiries }: TimerParts, event: HubEvent): void {
  if (event.type === 'closed') return expiries.disarmAll(event.hub);
  if (event.type !== 'message') return;
  const { hub } = event;
  const { payload } = event.message;
  if (payload.message === 'started' && typeof payload.ends_at === 'string') {
    expiries.arm(hub, payload.timer_id as string, payload.ends_at);
  } else if (payload.message === 'stopped') {
    expiries.disarm(hub, payload.timer_id as string);
  }
}

/**
 * A countdown's `ends_at`, or undefined when `duration` is not whole seconds ≥ 1 or ends past what
 * RFC 3339 can write. The frame's schema lets any JSON value through as `duration`, so that one of
 * the wrong type (`"5"`, `true`, an object) is `invalid_duration` here like `1.5` or `0`.
 */
function countdownEnd(nowMs: number, duration: unknown): string | undefined {
  if (typeof duration !== 'number' || !Number.isInteger(duration) || duration < 1) return undefined;
  const endMs = nowMs + duration * 1000;
  return endMs <= LATEST_END_MS ? new Date(endMs).toISOString() : undefined;
}

/** The timer as `started` and `join_success` show it: without its creator. */
function publicFields({ creator: _, ...fields }: RunningTimer): Omit<RunningTimer, 'creator'> {
  return fields;
}
