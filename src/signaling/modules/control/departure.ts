/**
 * The control module's way out (control.module.ts): a closed socket, or a moderator's removal,
 * takes the participant out of the room (`left` with its reason) or the waiting room, and lets
 * every module clean up.
 */
import type { RoomHub } from '../../room-hub.js';
import type { Session } from '../../session.js';
import { announceLeave } from '../../webhooks.js';
import type { LeaveReason } from '../module.js';
import type { ControlParts } from './control-context.js';
import { roomModules } from './participant-view.js';

export async function disconnect(parts: ControlParts, session: Session, hub: RoomHub, reason: LeaveReason): Promise<void> {
  if (session.state === 'joined') return leaveRoom(parts, session, hub, reason);
  if (session.state === 'waiting' || session.state === 'accepted') {
    await parts.moderationOf(session)?.leaveWaitingRoom(session, hub);
    await participantLeft(parts, session, hub, false);
  }
}

/**
 * Each step is tried whatever happened to the one before: the others should see the participant
 * go, and the modules clean up after it (a timer it started stops), even when the membership
 * store failed (its record then stays, and the room counts as not empty) or the bus did.
 */
async function leaveRoom(parts: ControlParts, session: Session, hub: RoomHub, reason: LeaveReason): Promise<void> {
  const { id } = session.participant;
  const { roomId } = session.room;
  const left = await parts.membership.leave(roomId, id).catch((err: unknown) => {
    parts.deps.logger.error({ err, roomId, participantId: id }, 'a member was not removed from the room');
  });
  // out of the room, nobody's hand is up (one sent to the waiting room may come back)
  session.handIsUp = undefined;
  session.handUpdatedAt = undefined;
  // not removed: a sweep took this instance for dead and announced the departure (membership-sweep.ts)
  if (left && !left.removed) return participantLeft(parts, session, hub, false);
  if (left) announceLeave(parts.deps.webhooks, session, left.remaining === 0);
  try {
    await hub.publish({ namespace: 'control', payload: { message: 'left', id, reason }, audience: { to: 'room', except: id } });
  } finally {
    await participantLeft(parts, session, hub, left?.remaining === 0);
  }
}

/** Lets every room module clean up after a participant; one module's failure does not stop the others. */
export async function participantLeft(parts: ControlParts, session: Session, hub: RoomHub, roomEmpty: boolean): Promise<void> {
  for (const module of roomModules(parts.deps, session.room)) {
    try {
      await module.participantLeft?.(session, hub, { roomEmpty });
    } catch (err) {
      parts.deps.logger.error({ err, namespace: module.namespace, roomId: session.room.roomId }, 'a module failed on a departure');
    }
  }
}
