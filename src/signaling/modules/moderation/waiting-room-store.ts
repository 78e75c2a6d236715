/**
 * The waiting room of each room, on every instance: who waits (with the record the moderators see)
 * and whom a moderator has let in. Accepting moves a participant from waiting to accepted in one
 * atomic step, so of two moderators accepting the same participant on two instances, one wins.
 * Accepted ids stay while the room has a session, so that an accepted participant who drops and
 * resumes (keeping its id) does not wait again; they are forgotten when the room empties.
 *
 * Crash cleanup (records of an instance that died with waiting participants) is left for later.
 */
import type { MemberRecord } from '../control/membership-store.js';

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
}
