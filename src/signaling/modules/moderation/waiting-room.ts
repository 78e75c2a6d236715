/**
 * The moderation module's waiting room (moderation.module.ts): who must wait, putting a joiner into
 * it and letting it in (`accept`, or the waiting room switched off), its departure, and what a
 * moderator is shown of it (on joining, on being made moderator).
 */
import type { ModerationJoinData } from '../../../../generated/signaling/types.js';
import type { RoomHub } from '../../room-hub.js';
import { byJoinTime, memberRecord } from '../../room-state/member-records.js';
import { waitingRoomOn } from '../../room-state/room-settings-store.js';
import type { EventPayload, Session } from '../../session.js';
import { participantData } from '../../webhooks.js';
import type { ModerationContext, ModerationParts } from './moderation-context.js';

/** Whether the session's room has its waiting room on now. */
async function waitingRoomIsOn(parts: ModerationContext, session: Session): Promise<boolean> {
  return waitingRoomOn(await parts.settings.read(session.room.roomId), session.room.waitingRoom);
}

/** A joining session must wait: the room has its waiting room on, it is no moderator and was not accepted before. */
export async function mustWait(parts: ModerationContext, session: Session): Promise<boolean> {
  if (session.role === 'moderator') return false;
  if (!(await waitingRoomIsOn(parts, session))) return false;
  return !(await parts.waitingRoom.isAccepted(session.room.roomId, session.participant.id));
}

/** Lets a waiting participant in (see ModerationContext.admit). */
export async function admit(parts: ModerationContext, roomId: string, target: string, hub: RoomHub): Promise<boolean> {
  if (!(await parts.waitingRoom.accept(roomId, target))) return false;
  await hub.publish({ namespace: 'moderation', payload: { message: 'accepted' }, audience: { to: 'participant', id: target } });
  await hub.publish({ namespace: 'moderation', payload: { message: 'left_waiting_room', id: target }, audience: { to: 'moderators' } });
  return true;
}

/** Puts a session into the waiting room (see ModerationContext.enterWaitingRoom). */
export async function enterWaitingRoom(parts: ModerationContext, session: Session, hub: RoomHub, answer: EventPayload): Promise<void> {
  const record = memberRecord(session);
  await parts.waitingRoom.add(session.room.roomId, record);
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
    await parts.waitingRoom.remove(session.room.roomId, record.id).catch(() => undefined);
    throw err;
  }
  hub.release(session, { namespace: 'moderation', payload: answer });
  parts.deps.webhooks?.emit(
    session.room,
    'waiting_room.entered',
    participantData(session),
    `waiting_room.entered:${session.room.roomId}:${record.id}:${session.joinedAt}`,
  );
  await admitIfSwitchedOff(parts, session, record.id, hub);
}

/**
 * A moderator may have switched the waiting room off after this participant found it on, and let
 * those waiting in before it was listed: then it lets itself in (of the two, one wins). It waits
 * already, so a failure here is logged, not answered: a moderator can still let it in.
 */
async function admitIfSwitchedOff(parts: ModerationContext, session: Session, id: string, hub: RoomHub): Promise<void> {
  try {
    if (!(await waitingRoomIsOn(parts, session))) await admit(parts, session.room.roomId, id, hub);
  } catch (err) {
    parts.deps.logger.error({ err, roomId: session.room.roomId, participantId: id }, 'a participant waiting as the waiting room went off was not let in');
  }
}

/** The session's socket closed while it waited or was accepted: the moderators see it go. */
export async function leaveWaitingRoom(parts: ModerationContext, session: Session, hub: RoomHub): Promise<void> {
  const { id } = session.participant;
  // false when a moderator accepted it meanwhile: the moderators saw it leave then
  if (!(await parts.waitingRoom.remove(session.room.roomId, id))) return;
  await hub.publish({ namespace: 'moderation', payload: { message: 'left_waiting_room', id }, audience: { to: 'moderators' } });
}

/** Join data: whether hands may be raised, for everyone; the waiting room, for moderators. */
export async function joinData(parts: ModerationParts, session: Session): Promise<ModerationJoinData> {
  const { roomId } = session.room;
  const moderator = session.role === 'moderator';
  const [roomSettings, waiting] = await Promise.all([parts.settings.read(roomId), moderator ? parts.waitingRoom.waiting(roomId) : []]);
  const { raiseHandsEnabled } = roomSettings;
  if (!moderator) return { raise_hands_enabled: raiseHandsEnabled };
  const participants = byJoinTime(waiting);
  parts.listed.remember(session, participants);
  return {
    raise_hands_enabled: raiseHandsEnabled,
    waiting_room_enabled: waitingRoomOn(roomSettings, session.room.waitingRoom),
    waiting_room_participants: participants,
  };
}

/** Shows a participant just made a moderator the waiting room as a joining moderator sees it. */
export async function showWaitingRoom(parts: ModerationParts, session: Session): Promise<void> {
  const { roomId } = session.room;
  const [on, waiting] = await Promise.all([waitingRoomIsOn(parts, session), parts.waitingRoom.waiting(roomId)]);
  if (on) session.send('moderation', { message: 'waiting_room_enabled' });
  const participants = byJoinTime(waiting);
  parts.listed.remember(session, participants);
  for (const participant of participants) session.send('moderation', { message: 'joined_waiting_room', ...participant });
}
