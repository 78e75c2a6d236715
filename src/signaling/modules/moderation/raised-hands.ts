/**
 * Moderators and raised hands (reference: OpenTalk's moderation module): `reset_raised_hands`
 * lowers every raised hand in the room, or the targets', and `disable_raise_hands` /
 * `enable_raise_hands` switch raising hands off and on for the whole room (a switch in the room
 * settings store, shared by every instance, forgotten when the room empties). Their events go to
 * the participants they concern as they are (`raised_hand_reset_by_moderator`,
 * `raise_hands_disabled`, `raise_hands_enabled`); each instance then lowers the hands of its own
 * sessions concerned, each in its session's order (the control module does, telling the others
 * `update`), so a hand raised just before still comes down.
 */
import type { ModerationResetRaisedHandsCommand } from '../../../../generated/signaling/types.js';
import type { RoomMessage } from '../../bus/signaling-bus.js';
import type { RoomHub } from '../../room-hub.js';
import type { Session } from '../../session.js';
import type { ModerationContext } from './moderation-context.js';

export interface RaisedHands {
  reset(session: Session, command: ModerationResetRaisedHandsCommand['payload'], hub: RoomHub): Promise<void>;
  setEnabled(session: Session, enabled: boolean, hub: RoomHub): Promise<void>;
  /** A room message reached this instance: when it is a reset or a disabling, its sessions concerned lower their hands. */
  lowerHandsConcerned(hub: RoomHub, message: RoomMessage): void;
}

export function createRaisedHands(context: ModerationContext): RaisedHands {
  const lower = (session: Session, hub: RoomHub) => session.enqueue(() => context.control().lowerHand(session, hub));

  return {
    async reset(session, { target }, hub) {
      if (session.role !== 'moderator') return context.fail(session, 'insufficient_permissions');
      const payload = { message: 'raised_hand_reset_by_moderator', issued_by: session.participant.id };
      if (target === undefined) return hub.publish({ namespace: 'moderation', payload, audience: { to: 'room' } });
      for (const id of new Set(typeof target === 'string' ? [target] : target)) {
        await hub.publish({ namespace: 'moderation', payload, audience: { to: 'participant', id } });
      }
    },

    async setEnabled(session, enabled, hub) {
      if (session.role !== 'moderator') return context.fail(session, 'insufficient_permissions');
      await context.settings.setRaiseHandsEnabled(session.room.roomId, enabled);
      const message = enabled ? 'raise_hands_enabled' : 'raise_hands_disabled';
      await hub.publish({ namespace: 'moderation', payload: { message, issued_by: session.participant.id }, audience: { to: 'room' } });
    },

    lowerHandsConcerned(hub, { payload, audience }) {
      if (payload.message !== 'raised_hand_reset_by_moderator' && payload.message !== 'raise_hands_disabled') return;
      if (audience.to === 'participant') {
        const session = hub.sessions.get(audience.id);
        if (session) lower(session, hub);
        return;
      }
      for (const session of hub.sessions.values()) if (session.state === 'joined') lower(session, hub);
    },
  };
}
