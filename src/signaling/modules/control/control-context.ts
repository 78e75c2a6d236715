/**
 * What the control module's parts (joining, hands, roles) share: the membership store, the way a
 * joined participant's own change is made, and the control `error` answer.
 *
 * A change to a participant (its hand, its role, its name) is made on the instance that holds its
 * session and in the session's order (a command of its own, or a task queued for a moderator's
 * order), so the session is the one writer of its record: the membership store learns the changed
 * record first (later joiners list it; a store that fails changes nothing), then the session, then
 * the others get `update`.
 */
import type { ControlErrorEvent } from '../../../../generated/signaling/types.js';
import type { RoomHub } from '../../room-hub.js';
import type { Session } from '../../session.js';
import type { ListedRecently } from '../listed-recently.js';
import type { ModerationModule, ModuleDeps } from '../module.js';
import type { CrashCleanup } from './membership-sweep.js';
import type { TimeLimit } from './time-limit.js';
import type { MembershipStore } from '../../room-state/membership-store.js';
import { memberOf, type ControlChange } from '../../room-state/member-records.js';

export type ControlError = ControlErrorEvent['payload']['error'];

export interface ControlContext {
  membership: MembershipStore;
  /** The moderation module, when the room's tariff enables it (without it: no waiting room, hands always allowed). */
  moderationOf(session: Session): ModerationModule | undefined;
  /** Publishes `update` (the participant as it is now) to the others of the room. */
  publishUpdate: (session: Session, hub: RoomHub) => Promise<void>;
  fail(session: Session, error: ControlError): void;
  /** The server time, RFC 3339. */
  now(): string;
}

/**
 * What the control module's join and departure (entering.ts, departure.ts) work with, beside the
 * context its hands and roles share: the module's dependencies, the room's time limit, the recent
 * entrants each joiner was listed, and (with Redis) the cleanup after dead instances.
 */
export interface ControlParts extends ControlContext {
  deps: ModuleDeps;
  timeLimit: TimeLimit;
  /** Per joiner: the recent entrants its `join_success` listed, whose `joined` it must not get again. */
  listed: ListedRecently;
  crashCleanup?: CrashCleanup;
}

/** Writes the joined session's changed record to the membership store, then makes the change on the session. */
export async function changeMember(context: ControlContext, session: Session, change: ControlChange): Promise<void> {
  await context.membership.update(session.room.roomId, memberOf(session, change));
  Object.assign(session, change);
}
