/**
 * Crash cleanup (issue 8): the members and waiting participants of instances that died with them
 * (SIGKILL, OOM, a lost machine; instance-liveness.ts tells which are dead) are taken out of the
 * room as if their sockets had closed: the others get `left` with reason `timeout` (the
 * moderators `left_waiting_room`), every module cleans up after them (a timer one of them started
 * stops with `creator_left`), and the last one out runs the cleanup of an emptied room (its
 * settings, accepted participants and chat are forgotten; the next join starts a new session).
 * Each removal is one atomic step naming the dead host, so of the instances sweeping a room at the
 * same time exactly one removes (and announces) each record, and a participant who came back on a
 * live instance with its id keeps its new record.
 *
 * An instance sweeps the rooms it hosts every `crash_sweep_interval_ms`, and a room right before a
 * `join` into it (so a room whose every instance died is cleaned when someone comes back, and the
 * participant limit counts only the living). A dead participant is thus gone within the liveness
 * lifetime plus one sweep interval.
 *
 * An instance that finds it was itself taken for dead (Redis away longer than the lifetime, for it
 * alone) ends the sessions whose records were removed meanwhile (`taken_for_gone`): the others saw them
 * leave, and they come back with a new join.
 */
import type { Logger } from '../../../logger.js';
import type { InstanceLiveness } from '../../../redis/instance-liveness.js';
import type { RoomContext } from '../../room-context.js';
import type { HubEvent, RoomHub } from '../../room-hub.js';
import type { Session } from '../../session.js';
import { isRedisDown } from '../../../redis/redis.js';
import type { ModuleDeps } from '../module.js';
import { announceLeave } from '../../webhooks.js';
import type { HostedRecords, Member, MemberRecord } from '../../room-state/membership-store.js';

export interface CrashCleanup {
  /** Before a `join`: this instance's liveness key exists (it will host a record), and the room is swept. */
  beforeJoin(session: Session, hub: RoomHub): Promise<void>;
  /** The rooms it sweeps are those whose hubs are open here: it hears them open and close. */
  onHubEvent(event: HubEvent): void;
  close(): void;
}

export interface CrashCleanupOptions {
  deps: ModuleDeps;
  liveness: InstanceLiveness;
  members: HostedRecords<Member>;
  waiting: HostedRecords<MemberRecord>;
  /** Lets every room module clean up after a participant (the control module's departure does the same). */
  participantLeft: (session: Session, hub: RoomHub, roomEmpty: boolean) => Promise<void>;
}

/** What the cleanup's functions share. */
interface Sweeper extends CrashCleanupOptions {
  log: Logger;
  /** The hubs open here: the rooms this instance hosts. */
  hubs: Set<RoomHub>;
  /** A periodic round is under way (a slow one, Redis slow, is not overtaken by the next). */
  sweeping: boolean;
}

export function createCrashCleanup(options: CrashCleanupOptions): CrashCleanup {
  const sweeper: Sweeper = { ...options, log: options.deps.logger.child({ component: 'crash-cleanup' }), hubs: new Set(), sweeping: false };
  const { deps, liveness, log, hubs } = sweeper;
  liveness.onLost(() => {
    closeRemoved(sweeper).catch((err: unknown) => log.error({ err }, 'closing the sessions of removed records failed'));
  });

  const timer = setInterval(() => void sweepHosted(sweeper), deps.config.crash_sweep_interval_ms);
  timer.unref();

  return {
    beforeJoin: (session, hub) => sweepBeforeJoin(sweeper, session, hub),
    onHubEvent({ type, hub }) {
      if (type === 'opened') hubs.add(hub);
      else if (type === 'closed') hubs.delete(hub);
    },
    close() {
      clearInterval(timer);
    },
  };
}

/** Removes the records of dead instances in the room and announces each removal this instance made. */
async function sweep(sweeper: Sweeper, hub: RoomHub, room: RoomContext): Promise<void> {
  const { members, waiting, liveness } = sweeper;
  const [memberHosts, waitingHosts] = await Promise.all([members.hosts(room.roomId), waiting.hosts(room.roomId)]);
  if (memberHosts.size + waitingHosts.size === 0) return;
  const dead = await liveness.gone([...memberHosts.values(), ...waitingHosts.values()]);
  if (dead.size === 0) return;
  for (const [id, host] of waitingHosts) if (dead.has(host)) await removeWaiting(sweeper, hub, room, id, host);
  for (const [id, host] of memberHosts) if (dead.has(host)) await removeMember(sweeper, hub, room, id, host);
}

/** A waiting participant of the dead `host`, unless another instance removed it first: the moderators see it go. */
async function removeWaiting(sweeper: Sweeper, hub: RoomHub, room: RoomContext, id: string, host: string): Promise<void> {
  const { roomId } = room;
  const removed = await sweeper.waiting.removeHostedBy(roomId, id, host);
  if (!removed) return;
  sweeper.log.info({ roomId, participantId: id, instanceId: host }, 'a waiting participant of a dead instance was removed');
  try {
    await hub.publish({ namespace: 'moderation', payload: { message: 'left_waiting_room', id }, audience: { to: 'moderators' } });
  } finally {
    await sweeper.participantLeft(departed(room, removed.record, undefined, 'waiting'), hub, false);
  }
}

/** A member of the dead `host`, unless another instance removed it first: it leaves the room with reason `timeout`. */
async function removeMember(sweeper: Sweeper, hub: RoomHub, room: RoomContext, id: string, host: string): Promise<void> {
  const { roomId } = room;
  const removed = await sweeper.members.removeHostedBy(roomId, id, host);
  if (!removed) return;
  sweeper.log.info({ roomId, participantId: id, instanceId: host }, 'a member of a dead instance was removed');
  try {
    await hub.publish({ namespace: 'control', payload: { message: 'left', id, reason: 'timeout' }, audience: { to: 'room', except: id } });
  } finally {
    const session = departed(room, removed.record.record, removed.record.userId, 'joined');
    announceLeave(sweeper.deps.webhooks, session, removed.remaining === 0);
    await sweeper.participantLeft(session, hub, removed.remaining === 0);
  }
}

/**
 * Whether an instance hosting records of the room is dead: the cheap look before a join, which
 * reads the few hosting instances instead of every record's host (a room of thousands filling up
 * would read them all once per joiner).
 */
async function hostsAnyGone({ members, waiting, liveness }: Sweeper, roomId: string): Promise<boolean> {
  const [memberHosts, waitingHosts] = await Promise.all([members.instances(roomId), waiting.instances(roomId)]);
  if (memberHosts.length + waitingHosts.length === 0) return false;
  return (await liveness.gone([...memberHosts, ...waitingHosts])).size > 0;
}

/** Before a `join`: this instance's liveness key exists (it will host a record), and the room is swept if a host of it died. */
async function sweepBeforeJoin(sweeper: Sweeper, session: Session, hub: RoomHub): Promise<void> {
  await sweeper.liveness.registered();
  try {
    if (await hostsAnyGone(sweeper, session.room.roomId)) await sweep(sweeper, hub, session.room);
  } catch (err) {
    // Redis away: the join would fail next, so it fails here; otherwise the dead wait for the next sweep
    if (isRedisDown(err)) throw err;
    sweeper.log.warn({ err, roomId: hub.roomId }, 'sweeping a room before a join failed');
  }
}

/** The periodic round: every room this instance hosts, one after another; a room that fails is logged and skipped. */
async function sweepHosted(sweeper: Sweeper): Promise<void> {
  if (sweeper.sweeping) return;
  sweeper.sweeping = true;
  try {
    for (const hub of [...sweeper.hubs]) {
      const room = roomOf(hub);
      if (room) await sweep(sweeper, hub, room).catch((err: unknown) => sweeper.log.warn({ err, roomId: hub.roomId }, 'sweeping a room failed'));
    }
  } finally {
    sweeper.sweeping = false;
  }
}

/** The room as one of the hub's sessions knows it; none while the hub has no session. */
function roomOf(hub: RoomHub): RoomContext | undefined {
  return hub.sessions.values().next().value?.room;
}

/** This instance was taken for dead: its sessions whose records were removed meanwhile are closed. */
async function closeRemoved(sweeper: Sweeper): Promise<void> {
  for (const hub of [...sweeper.hubs]) await closeRemovedIn(sweeper, hub);
}

/**
 * Only sessions that were fully in before the records are read count: one still entering (its
 * state set, its record being written) would look removed, and be closed for nothing.
 */
async function closeRemovedIn({ members, waiting, liveness }: Sweeper, hub: RoomHub): Promise<void> {
  const settled = [...hub.sessions.values()].filter((session) => !hub.isEntering(session)).map((session) => ({ session, state: session.state }));
  const [memberHosts, waitingHosts] = await Promise.all([members.hosts(hub.roomId), waiting.hosts(hub.roomId)]);
  for (const { session, state } of settled) {
    if (session.state !== state) continue; // left, entered or was moved meanwhile: its record changed with it
    const hosts = state === 'joined' ? memberHosts : state === 'waiting' ? waitingHosts : undefined;
    if (hosts && hosts.get(session.participant.id) !== liveness.id) session.leave('taken_for_gone');
  }
}

/**
 * A departed participant as the modules' cleanup sees a session: who it was, its room and state;
 * it has no socket (nothing is sent to it, nothing queued).
 */
function departed(room: RoomContext, record: MemberRecord, userId: string | undefined, state: 'joined' | 'waiting'): Session {
  const { control } = record;
  const kind = control.participation_kind === 'recorder' ? 'guest' : control.participation_kind;
  const who = userId !== undefined ? { kind: 'user' as const, userId } : kind === 'sip' ? { kind, sipId: '' } : { kind: 'guest' as const, inviteCode: '' };
  return {
    participant: { id: record.id, who, kind, role: control.role, isRoomOwner: control.is_room_owner, resuming: false, resumption: '' },
    room,
    state,
    role: control.role,
    displayName: control.display_name,
    ...(control.avatar_url !== undefined ? { avatarUrl: control.avatar_url } : {}),
    joinedAt: control.joined_at,
    handIsUp: control.hand_is_up,
    handUpdatedAt: control.hand_updated_at,
    send: () => undefined,
    leave: () => undefined,
    enqueue: () => undefined,
  };
}
