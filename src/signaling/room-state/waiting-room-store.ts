/**
 * The waiting room of each room, on every instance: who waits (with the record the moderators see)
 * and whom a moderator has let in. Accepting moves a participant from waiting to accepted in one
 * atomic step, so of two moderators accepting the same participant on two instances, one wins.
 * Accepted ids stay while the room has a session, so that an accepted participant who drops and
 * resumes (keeping its id) does not wait again; they are forgotten when the room empties.
 *
 * Crash cleanup: in Redis each waiting participant's record names the instance hosting it, so that
 * the records of an instance that died with waiting participants can be found and removed
 * (control/membership-sweep.ts). The in-process store has none of this: a crash takes it along.
 */
import type { HostedRecords, MemberRecord } from './membership-store.js';

export interface WaitingRoomStore {
  add(roomId: string, participant: MemberRecord): Promise<void>;
  /** Removes a waiting participant; false when it was not waiting (accepted meanwhile, or never there). */
  remove(roomId: string, participantId: string): Promise<boolean>;
  /** Moves a waiting participant to the accepted ones; false when it was not waiting. */
  accept(roomId: string, participantId: string): Promise<boolean>;
  waiting(roomId: string): Promise<MemberRecord[]>;
  isAccepted(roomId: string, participantId: string): Promise<boolean>;
  /** A moderator removed the participant from the room: it waits again when it comes back. */
  unaccept(roomId: string, participantId: string): Promise<void>;
  /** The room emptied: its accepted participants wait again next time. */
  forgetAccepted(roomId: string): Promise<void>;
  /** Shared stores only (Redis): which instance hosts each waiting participant, for crash cleanup. */
  readonly hosted?: HostedRecords<MemberRecord>;
}
