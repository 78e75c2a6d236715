/**
 * Moderators removing participants (reference: OpenTalk's moderation module): `kick`, `ban`,
 * `send_to_waiting_room` and `debrief`. The sender's instance checks the command against the
 * target's record in the membership store (the target may be on any instance) and does what is
 * shared (the ban in the database, the waiting room's switch, accepted marks), then publishes an
 * order (see moderation-context.ts). Where a session concerned is, in its order: it gets its last
 * frame (`kicked`, `banned`, `session_ended`), the session ends (`Session.leave`) and it departs (the
 * others see `left` with the reason), or it is moved to the waiting room. A session that has left
 * meanwhile is left alone.
 *
 * Kick: the target may come back (and waits if the room has its waiting room on). Ban of a
 * registered user: the user's every session in the room, waiting or not, ends, and `room_bans` keeps
 * it out of the room and its data for good. Ban of an invite-code guest: its session ends and the
 * code it came in with is deactivated, so that neither it nor anyone else starts with the code again
 * (other guests of the code in the room stay until they leave). Callers cannot be banned. Send to the waiting room, and debrief: the room's waiting room is on until the room
 * empties, so those removed wait when they come back; a debriefing ends the sessions of the scope's
 * roles (`all`: everyone, the sender too) and tells the others `debriefing_started`.
 */
import type {
  KickScope,
  ModerationBanCommand,
  ModerationDebriefCommand,
  ModerationKickCommand,
  ModerationSendToWaitingRoomCommand,
  Role,
} from '../../../../generated/signaling/types.js';
import type { RoomMessage } from '../../bus/signaling-bus.js';
import type { RoomHub } from '../../room-hub.js';
import type { EventPayload, Session, SessionEnd, SessionState } from '../../session.js';
import type { LeaveReason } from '../module.js';
import { forceWaitingRoom, type ModerationContext } from './moderation-context.js';

/** The orders of this file, by the command that gives them. */
const ORDERS = new Set(['kick', 'ban', 'send_to_waiting_room', 'debrief']);
/** States in which a session is in the room or its waiting room, and so departs. */
const PRESENT: ReadonlySet<SessionState> = new Set(['joined', 'waiting', 'accepted']);

type TargetCommand = ModerationKickCommand['payload'] | ModerationBanCommand['payload'] | ModerationSendToWaitingRoomCommand['payload'];

const KICKS: Record<KickScope, (role: Role) => boolean> = {
  guests: (role) => role === 'guest',
  users_and_guests: (role) => role !== 'moderator',
  all: () => true,
};

export interface Removals {
  kick(session: Session, command: ModerationKickCommand['payload'], hub: RoomHub): Promise<void>;
  ban(session: Session, command: ModerationBanCommand['payload'], hub: RoomHub): Promise<void>;
  sendToWaitingRoom(session: Session, command: ModerationSendToWaitingRoomCommand['payload'], hub: RoomHub): Promise<void>;
  debrief(session: Session, command: ModerationDebriefCommand['payload'], hub: RoomHub): Promise<void>;
  isOrder(message: RoomMessage): boolean;
  /** Carries out an order for this instance's sessions concerned, each in its order. */
  carryOut(hub: RoomHub, message: RoomMessage): void;
}

export function createRemovals(context: ModerationContext): Removals {
  return {
    kick: (session, command, hub) => kick(context, session, command, hub),
    ban: (session, command, hub) => ban(context, session, command, hub),
    sendToWaitingRoom: (session, command, hub) => sendToWaitingRoom(context, session, command, hub),
    debrief: (session, command, hub) => debrief(context, session, command, hub),
    isOrder,
    carryOut: (hub, message) => carryOut(context, hub, message),
  };
}

/** The target of a command as the membership store has it, or undefined once `error` was answered. */
async function targetOf(
  context: ModerationContext,
  session: Session,
  { target }: TargetCommand,
  ownerError: 'cannot_kick_room_owner' | 'cannot_ban_room_owner' | 'cannot_send_room_owner_to_waiting_room',
) {
  if (session.role !== 'moderator') return context.fail(session, 'insufficient_permissions');
  const member = await context.control().member(session.room.roomId, target);
  if (!member) return context.fail(session, 'unknown_participant');
  if (member.record.control.is_room_owner) return context.fail(session, ownerError);
  return member;
}

const order = (hub: RoomHub, payload: RoomMessage['payload'], target?: string): Promise<void> =>
  hub.publish({ namespace: 'moderation', payload, audience: target === undefined ? { to: 'room' } : { to: 'participant', id: target } });

/**
 * Ends the session: `lastWord` is its last frame (its socket closes right after), then it departs
 * with `reason`; from then on no command of the socket acts, and its own departure finds it gone.
 */
async function end(context: ModerationContext, session: Session, hub: RoomHub, lastWord: EventPayload, reason: LeaveReason, ending: SessionEnd) {
  session.send('moderation', lastWord);
  session.leave(ending);
  try {
    if (PRESENT.has(session.state)) await context.control().disconnect(session, hub, reason);
  } finally {
    session.state = 'closed';
  }
}

async function moveToWaitingRoom(context: ModerationContext, session: Session, hub: RoomHub) {
  try {
    await context.control().disconnect(session, hub, 'sent_to_waiting_room');
    // out of the room: from here on only what is meant for it alone reaches it
    session.state = 'connected';
    session.joinedAt = new Date(context.deps.scheduler.now()).toISOString();
    await context.enterWaitingRoom(session, hub, { message: 'sent_to_waiting_room' });
  } catch (err) {
    // halfway out of the room and not waiting: the client starts anew
    session.leave('failed');
    throw err;
  }
}

/** Each local session the order concerns, with what to do with it (in its order). */
function* tasksOf(context: ModerationContext, hub: RoomHub, message: RoomMessage): Iterable<[Session, () => Promise<void>]> {
  const { payload, audience } = message;
  if (payload.message === 'ban' && audience.to === 'room') {
    for (const session of hub.sessions.values()) {
      const { who } = session.participant;
      if (who.kind !== 'user' || who.userId !== payload.user_id) continue;
      yield [
        session,
        async () => {
          if (session.state !== 'closed') await end(context, session, hub, { message: 'banned' }, 'banned', 'banned');
        },
      ];
    }
  } else if (payload.message === 'debrief') {
    const scope = payload.kick_scope as KickScope;
    const { issued_by } = payload;
    for (const session of hub.sessions.values()) {
      yield [
        session,
        async () => {
          if (session.state !== 'joined') return;
          if (!KICKS[scope](session.role)) return session.send('moderation', { message: 'debriefing_started', issued_by });
          await context.waitingRoom.unaccept(session.room.roomId, session.participant.id);
          await end(context, session, hub, { message: 'session_ended', issued_by }, 'kicked', 'debriefed');
        },
      ];
    }
  } else if (audience.to === 'participant') {
    const session = hub.sessions.get(audience.id);
    if (!session) return;
    const { message } = payload;
    yield [
      session,
      async () => {
        if (session.state !== 'joined') return;
        if (message === 'kick') await end(context, session, hub, { message: 'kicked' }, 'kicked', 'kicked');
        else if (message === 'ban') await end(context, session, hub, { message: 'banned' }, 'banned', 'banned');
        else await moveToWaitingRoom(context, session, hub);
      },
    ];
  }
}

async function kick(context: ModerationContext, session: Session, command: ModerationKickCommand['payload'], hub: RoomHub): Promise<void> {
  if (!(await targetOf(context, session, command, 'cannot_kick_room_owner'))) return;
  await context.waitingRoom.unaccept(session.room.roomId, command.target);
  await order(hub, { message: 'kick' }, command.target);
}

async function ban(context: ModerationContext, session: Session, command: ModerationBanCommand['payload'], hub: RoomHub): Promise<void> {
  const member = await targetOf(context, session, command, 'cannot_ban_room_owner');
  if (!member) return;
  const { who } = session.participant;
  const { roomId } = session.room;
  // a guest made moderator has no user to record: the ban is the room owner's then
  const by = who.kind === 'user' ? who.userId : session.room.ownerId;
  if (member.userId !== undefined) {
    await context.roomEntry.ban(roomId, member.userId, by);
    await order(hub, { message: 'ban', user_id: member.userId });
  } else if (member.inviteCode !== undefined) {
    await context.roomEntry.revokeInviteCode(roomId, member.inviteCode, by, new Date(context.deps.scheduler.now()));
    await order(hub, { message: 'ban' }, command.target);
  } else {
    // a caller: its gateway's call-in pin is the room's, for every caller
    context.fail(session, 'cannot_ban_guest');
  }
}

async function sendToWaitingRoom(
  context: ModerationContext,
  session: Session,
  command: ModerationSendToWaitingRoomCommand['payload'],
  hub: RoomHub,
): Promise<void> {
  if (!(await targetOf(context, session, command, 'cannot_send_room_owner_to_waiting_room'))) return;
  await context.waitingRoom.unaccept(session.room.roomId, command.target);
  await forceWaitingRoom(context, session, hub);
  await order(hub, { message: 'send_to_waiting_room' }, command.target);
}

async function debrief(context: ModerationContext, session: Session, { kick_scope }: ModerationDebriefCommand['payload'], hub: RoomHub): Promise<void> {
  if (session.role !== 'moderator') return context.fail(session, 'insufficient_permissions');
  await forceWaitingRoom(context, session, hub);
  await order(hub, { message: 'debrief', kick_scope, issued_by: session.participant.id });
}

function isOrder(message: RoomMessage): boolean {
  return ORDERS.has(message.payload.message);
}

function carryOut(context: ModerationContext, hub: RoomHub, message: RoomMessage): void {
  for (const [session, task] of tasksOf(context, hub, message)) session.enqueue(task);
}
