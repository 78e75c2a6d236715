/**
 * Raised hands (as the reference controller has it): a participant in the room raises and lowers its own
 * hand; the others get `update` with `hand_is_up` and `hand_updated_at`. A hand already where it is
 * asked to be changes nothing. While a moderator has disabled raised hands (the moderation module's
 * room switch, shared by every instance) `raise_hand` is refused with `raise_hands_disabled`;
 * a moderator's reset or disabling lowers hands through `lower`, queued in each session's order on
 * its own instance.
 */
import type { RoomHub } from '../../room-hub.js';
import type { Session } from '../../session.js';
import { changeMember, type ControlContext } from './control-context.js';

export interface Hands {
  /** The `raise_hand` command of a joined session. */
  raise(session: Session, hub: RoomHub): Promise<void>;
  /** The `lower_hand` command, and a moderator's lowering: nothing for a session not in the room. */
  lower(session: Session, hub: RoomHub): Promise<void>;
}

export function createHands(context: ControlContext): Hands {
  async function put(session: Session, hub: RoomHub, up: boolean): Promise<void> {
    if ((session.handIsUp ?? false) === up) return;
    await changeMember(context, session, { handIsUp: up, handUpdatedAt: context.now() });
    await context.publishUpdate(session, hub);
  }

  return {
    async raise(session, hub) {
      const moderation = context.moderationOf(session);
      if (moderation && !(await moderation.raiseHandsEnabled(session.room.roomId))) return context.fail(session, 'raise_hands_disabled');
      await put(session, hub, true);
    },
    async lower(session, hub) {
      if (session.state !== 'joined') return;
      await put(session, hub, false);
    },
  };
}
