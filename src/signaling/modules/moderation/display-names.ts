/**
 * Moderators renaming a participant (reference: OpenTalk's moderation module,
 * `change_display_name`): only invite-code guests and callers, whose names are whatever they typed
 * or their phone number; registered users keep the name they chose. The sender's instance checks
 * the command against the target's record in the membership store (the target may be on any
 * instance) and the name against the rule of `join`, then publishes an order to the target; its
 * own instance, in the session's order, changes the record and the session, tells everyone in the
 * room `display_name_changed` (the reference's 2024 web app shows it) and the others `update`.
 */
import type { ModerationChangeDisplayNameCommand } from '../../../../generated/signaling/types.js';
import type { RoomMessage } from '../../bus/signaling-bus.js';
import type { RoomHub } from '../../room-hub.js';
import type { Session } from '../../session.js';
import { displayNameOf } from '../../room-state/display-name.js';
import type { ModerationContext } from './moderation-context.js';

/** The order's tag: the command's own action (no client is sent it). */
const ORDER = 'change_display_name';
/** The participation kinds a moderator may rename. */
const RENAMABLE = new Set(['guest', 'sip']);

export interface DisplayNames {
  change(session: Session, command: ModerationChangeDisplayNameCommand['payload'], hub: RoomHub): Promise<void>;
  isOrder(message: RoomMessage): boolean;
  /** Carries out a rename on the target's instance, in the session's order. */
  carryOut(hub: RoomHub, message: RoomMessage): void;
}

export function createDisplayNames(context: ModerationContext): DisplayNames {
  async function rename(session: Session, hub: RoomHub, newName: string, issuedBy: string): Promise<void> {
    // gone meanwhile (left, or sent to the waiting room): nothing to rename
    const oldName = session.displayName;
    if (session.state !== 'joined' || oldName === undefined) return;
    const control = context.control();
    await control.rename(session, newName);
    const { id } = session.participant;
    await hub.publish({
      namespace: 'moderation',
      payload: { message: 'display_name_changed', target: id, issued_by: issuedBy, old_name: oldName, new_name: newName },
      audience: { to: 'room' },
    });
    await control.publishUpdate(session, hub);
  }

  return {
    async change(session, { target, new_name }, hub) {
      if (session.role !== 'moderator') return context.fail(session, 'insufficient_permissions');
      const member = await context.control().member(session.room.roomId, target);
      if (!member) return context.fail(session, 'unknown_participant');
      if (!RENAMABLE.has(member.record.control.participation_kind)) return context.fail(session, 'cannot_change_name_of_registered_users');
      const newName = displayNameOf(new_name);
      if (newName === undefined) return context.fail(session, 'invalid_display_name');
      await hub.publish({
        namespace: 'moderation',
        payload: { message: ORDER, new_name: newName, issued_by: session.participant.id },
        audience: { to: 'participant', id: target },
      });
    },

    isOrder(message) {
      return message.payload.message === ORDER && message.audience.to === 'participant';
    },

    carryOut(hub, { payload, audience }) {
      if (audience.to !== 'participant') return;
      const session = hub.sessions.get(audience.id);
      session?.enqueue(() => rename(session, hub, String(payload.new_name), String(payload.issued_by)));
    },
  };
}
