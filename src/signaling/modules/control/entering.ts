/**
 * The control module's way in (control.module.ts): `join` names the participant and puts it into
 * the room, or into the waiting room (the moderation module's part); `enter_room` lets an accepted
 * participant in. Entering takes a place in the room's membership (atomically against the tariff's
 * `room_participant_limit`), tells the others `joined` and then answers `join_success` with the
 * room as it is; a failure before that gives the place back, so the connection's `internal_error`
 * means nothing changed.
 */
import type { ControlJoinCommand } from '../../../../generated/signaling/types.js';
import type { Frame, RoomHub } from '../../room-hub.js';
import type { Session } from '../../session.js';
import type { Member, MemberRecord } from '../../room-state/membership-store.js';
import { displayNameOf } from '../../room-state/display-name.js';
import { byJoinTime, memberOf } from '../../room-state/member-records.js';
import { announceJoin } from '../../webhooks.js';
import type { SignalingModule } from '../module.js';
import type { ControlParts } from './control-context.js';
import { listJson, roomModules, withPeerData, type ParticipantView } from './participant-view.js';

export async function join(parts: ControlParts, session: Session, command: ControlJoinCommand['payload'], hub: RoomHub): Promise<void> {
  if (session.state !== 'connected') return parts.fail(session, 'already_joined');
  const displayName = displayNameOf(command.display_name);
  if (displayName === undefined) return parts.fail(session, 'invalid_username');
  session.displayName = displayName;
  session.avatarUrl = avatarOf(session, command.avatar_url);
  // the dead are out before the limit, the waiting room and the participant list are looked at
  await parts.crashCleanup?.beforeJoin(session, hub);

  const moderation = parts.moderationOf(session);
  if (moderation && (await moderation.mustWait(session))) {
    session.joinedAt = parts.now();
    return moderation.enterWaitingRoom(session, hub);
  }
  await enterRoom(parts, session, hub);
}

/** What entering tells: the joiner as the others see it, those already in, and every module's join data. */
interface Entry {
  self: ParticipantView;
  participants: ParticipantView[];
  /** `participants` as JSON, put together from each record's kept JSON (participant-view.ts). */
  participantsJson: string;
  moduleData: Record<string, unknown>;
  startedAtMs: number;
  closesAtMs: number | undefined;
}

export async function enterRoom(parts: ControlParts, session: Session, hub: RoomHub): Promise<void> {
  const previous = session.state;
  session.joinedAt = parts.now();
  const member = memberOf(session);
  hub.hold(session);
  const heldAt = { hub, delivered: parts.listed.deliveredSoFar(hub) };
  session.state = 'joined';
  const joinedAtMs = parts.deps.scheduler.now();
  let entry: Entry;
  try {
    const taken = await takePlace(parts, session, hub, member, joinedAtMs);
    if ('blocked' in taken) {
      hub.drop(session);
      session.state = previous;
      return session.send('control', { message: 'join_blocked', reason: taken.blocked });
    }
    entry = taken;
    // the others first: until the newcomer itself is told, a failure gives the place back and changes nothing
    await hub.publish({ namespace: 'control', payload: { message: 'joined', ...entry.self }, audience: { to: 'room', except: session.participant.id } });
    parts.listed.remember(session, entry.participants, heldAt);
    hub.release(session, joinSuccess(session, member.record, entry));
  } catch (err) {
    hub.drop(session);
    session.state = previous;
    await parts.membership.leave(session.room.roomId, session.participant.id).catch(() => undefined);
    throw err;
  }
  if (entry.closesAtMs !== undefined) parts.timeLimit.arm(session.room, entry.closesAtMs);
  // the store began the room's session at this join's time only when the room was empty
  announceJoin(parts.deps.webhooks, session, entry.startedAtMs, entry.startedAtMs === joinedAtMs);
}

/** Takes the joiner's place in the membership and reads the room as it is, or says why it is blocked. */
async function takePlace(
  parts: ControlParts,
  session: Session,
  hub: RoomHub,
  member: Member,
  joinedAtMs: number,
): Promise<Entry | { blocked: 'participant_limit_reached' }> {
  const { room, participant } = session;
  const outcome = await parts.membership.join(room.roomId, member, room.tariff.quotas.room_participant_limit, joinedAtMs);
  if (!outcome.joined) return { blocked: outcome.reason };
  const modules = roomModules(parts.deps, room);
  const others = byJoinTime((await parts.membership.members(room.roomId)).filter((other) => other.id !== participant.id));
  // the joiner's own view (for `joined`) and the others' (for `join_success`) in one read per module
  const [[self, ...participants], moduleData] = await Promise.all([
    withPeerData(modules, room.roomId, [member.record, ...others]),
    joinDataOf(modules, session, hub),
  ]);
  const { startedAtMs } = outcome;
  const participantsJson = listJson(others, participants);
  return { self: self!, participants, participantsJson, moduleData, startedAtMs, closesAtMs: parts.timeLimit.closesAt(room, startedAtMs) };
}

/** The answer, with its payload's JSON made from the list's (the same text JSON.stringify would write). */
function joinSuccess(session: Session, record: MemberRecord, { participants, participantsJson, moduleData, closesAtMs }: Entry): Frame {
  const head = joinSuccessHead(session, record, closesAtMs);
  const modulesJson = Object.keys(moduleData).length > 0 ? `,${JSON.stringify(moduleData).slice(1, -1)}` : '';
  return {
    namespace: 'control',
    payload: { ...head, participants, ...moduleData },
    payloadJson: `${JSON.stringify(head).slice(0, -1)},"participants":${participantsJson}${modulesJson}}`,
  };
}

/** `join_success` up to its participant list. */
function joinSuccessHead(session: Session, record: MemberRecord, closesAtMs: number | undefined): Record<string, unknown> {
  const { room, participant } = session;
  return {
    message: 'join_success',
    id: participant.id,
    display_name: record.control.display_name,
    ...(record.control.avatar_url !== undefined ? { avatar_url: record.control.avatar_url } : {}),
    role: session.role,
    is_room_owner: participant.isRoomOwner,
    closes_at: closesAtMs === undefined ? null : new Date(closesAtMs).toISOString(),
    tariff: room.tariff,
    ...(room.eventInfo ? { event_info: room.eventInfo } : {}),
  };
}

/** Every room module's join-time data, by namespace (absent when a module has none for this session). */
async function joinDataOf(modules: SignalingModule[], session: Session, hub: RoomHub): Promise<Record<string, unknown>> {
  const entries = await Promise.all(modules.map(async (module) => [module.namespace, await module.joinData?.(session, hub)] as const));
  return Object.fromEntries(entries.filter(([, data]) => data !== undefined));
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
