/**
 * Granting and revoking the moderator role (as the reference controller has it). A moderator's
 * command is checked against the target's record in the membership store (the target may be on
 * any instance) and becomes an order: a control room message to the target, which no client is
 * sent (withheld); the target's instance, in the session's order, changes the session's role,
 * which is what every permission check and the moderators' audience read. The record follows, the
 * target gets `role_updated`, the others `update`, and a new moderator is shown the waiting room.
 *
 * The room's owner always stays a moderator; a revoked participant falls back to the role its kind
 * has (`user` for registered users, `guest` for guests and callers), event-invite role or not.
 */
import type { ControlGrantModeratorRoleCommand, ControlRevokeModeratorRoleCommand, Role } from '../../../../generated/signaling/types.js';
import type { RoomMessage } from '../../bus/signaling-bus.js';
import type { RoomHub } from '../../room-hub.js';
import type { Session } from '../../session.js';
import { changeMember, type ControlContext } from './control-context.js';

const GRANT = 'grant_moderator_role';
const REVOKE = 'revoke_moderator_role';
type RoleCommand = ControlGrantModeratorRoleCommand['payload'] | ControlRevokeModeratorRoleCommand['payload'];

export interface Roles {
  /** `grant_moderator_role` / `revoke_moderator_role` of a joined session. */
  command(session: Session, command: RoleCommand, hub: RoomHub): Promise<void>;
  /** True for an order to a target's instance (never sent to a client). */
  isOrder(message: RoomMessage): boolean;
  /** Carries out an order on the target's instance, in the session's order. */
  carryOut(hub: RoomHub, message: RoomMessage): void;
}

export function createRoles(context: ControlContext): Roles {
  /** The role the session has with (grant) or without the moderator role. */
  const roleOf = (session: Session, grant: boolean): Role =>
    grant || session.participant.isRoomOwner ? 'moderator' : session.participant.kind === 'user' ? 'user' : 'guest';

  async function apply(session: Session, hub: RoomHub, grant: boolean): Promise<void> {
    const role = roleOf(session, grant);
    // gone, or the role it has already (two orders crossed): nothing to tell
    if (session.state !== 'joined' || session.role === role) return;
    await changeMember(context, session, { role });
    session.send('control', { message: 'role_updated', new_role: role });
    await context.publishUpdate(session, hub);
    if (role === 'moderator') await context.moderationOf(session)?.showWaitingRoom(session);
  }

  return {
    async command(session, { action, target }, hub) {
      if (session.role !== 'moderator') return context.fail(session, 'insufficient_permissions');
      const member = await context.membership.member(session.room.roomId, target);
      if (!member) return context.fail(session, 'unknown_participant');
      const grant = action === GRANT;
      if ((member.record.control.role === 'moderator') === grant) return context.fail(session, 'nothing_to_do');
      if (!grant && member.record.control.is_room_owner) return context.fail(session, 'target_is_room_owner');
      await hub.publish({ namespace: 'control', payload: { message: action }, audience: { to: 'participant', id: target } });
    },

    isOrder(message) {
      return message.audience.to === 'participant' && (message.payload.message === GRANT || message.payload.message === REVOKE);
    },

    carryOut(hub, message) {
      if (message.audience.to !== 'participant') return;
      const session = hub.sessions.get(message.audience.id);
      session?.enqueue(() => apply(session, hub, message.payload.message === GRANT));
    },
  };
}
