/**
 * Who is in a room, on every instance: each joined participant's record (as `join_success` lists
 * it to later joiners, kept up to date as hands go up and roles change) with a registered user's id
 * or a guest's invite code (never shown to anyone; a ban needs them), and the time the room's session began (the first join
 * since it was last empty; `closes_at` counts from it). The in-process store serves one instance;
 * the Redis store makes one room of the participants of every instance, with the participant limit
 * checked and the member added in one atomic step, so concurrent joins on two instances cannot both
 * take the last place.
 *
 * Crash cleanup: in Redis each record names the instance hosting it (`HostedRecords`), so that the
 * records of an instance that died with participants can be found and removed
 * (membership-sweep.ts). The in-process store has none of this: a crash takes it along.
 */
import type { Participant } from '../../../generated/signaling/types.js';

/** A member as the others see it: the Participant without the other modules' peer data (asked for when needed). */
export type MemberRecord = Pick<Participant, 'id' | 'control'>;

/**
 * A member as stored: its record, the user id of a registered user and the invite code of an
 * invite-code guest (neither ever shown to anyone: a ban needs them).
 */
export interface Member {
  record: MemberRecord;
  userId?: string;
  inviteCode?: string;
}

export type JoinOutcome =
  { joined: true; /** when the room's session began (ms since the epoch) */ startedAtMs: number } | { joined: false; reason: 'participant_limit_reached' };

export interface MembershipStore {
  /**
   * Adds (or replaces) a member unless `limit` members other than this one are already in the
   * room; the first member of an empty room sets its start time to `nowMs`.
   */
  join(roomId: string, member: Member, limit: number | undefined, nowMs: number): Promise<JoinOutcome>;
  /** Replaces the member's record while it is in the room; one that has left stays out. */
  update(roomId: string, member: Member): Promise<void>;
  /** Removes a member; `remaining` counts the others. The last one out clears the start time. */
  leave(roomId: string, participantId: string): Promise<{ removed: boolean; remaining: number }>;
  /**
   * Every member's record, frozen, in no promised order. A record is the same object from call to
   * call while it is unchanged, so that what a caller derives from one (its JSON) can be kept by its
   * identity: a join reads every member, and a room of thousands is read once for each joiner.
   */
  members(roomId: string): Promise<MemberRecord[]>;
  /** One member, or undefined when it is not in the room. */
  member(roomId: string, participantId: string): Promise<Member | undefined>;
  /** When the room's current session began; undefined while the room is empty. */
  startedAt(roomId: string): Promise<number | undefined>;
  /** Shared stores only (Redis): which instance hosts each member, for crash cleanup. */
  readonly hosted?: HostedRecords<Member>;
}

/** The records of a store shared by instances, by the instance that hosts each (writes them, holds the socket). */
export interface HostedRecords<T> {
  /**
   * The hosting instance of each record, by participant id. Also extends the lifetime of the
   * room's keys: the caller hosts the room, so they are in use.
   */
  hosts(roomId: string): Promise<Map<string, string>>;
  /**
   * The instances that host records of the room, and perhaps some that hosted one since the last
   * `hosts` (which forgets those): the cheap look before a join, where only a dead one among them
   * calls for `hosts`. A read only: the join that follows and the periodic sweep's `hosts` extend
   * the keys' lifetime.
   */
  instances(roomId: string): Promise<string[]>;
  /**
   * Removes a record while `instanceId` still hosts it (one of a participant who came back on
   * another instance with its id stays), in one step on every instance: the record removed and how
   * many records remain (for members: the last one out clears the start time), or undefined.
   */
  removeHostedBy(roomId: string, participantId: string, instanceId: string): Promise<{ record: T; remaining: number } | undefined>;
}
