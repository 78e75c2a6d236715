/**
 * Where the room's timer and its ready statuses live: in this process (one instance) or in Redis,
 * shared by every instance (docs/architecture.md §6). Every operation that decides something is atomic in
 * the store itself, so that "one timer per room" and "`expired` exactly once" hold however many
 * instances race: `create` succeeds for one starter only, and `take` for one taker only.
 *
 * A timer is deleted by the `take` that ends it (expiry, stop, its creator leaving); since its
 * creator is in the room while it runs, nothing is left when the room empties.
 */
import type { TimerKind } from '../../../../generated/signaling/types.js';

/** The running timer: the fields of `started` (without `message`) and who started it. */
export interface RunningTimer {
  timer_id: string;
  kind: TimerKind;
  /** RFC 3339 */
  started_at: string;
  /** RFC 3339; countdowns only */
  ends_at?: string;
  title?: string;
  style?: string;
  ready_check_enabled: boolean;
  /** The participant id of the moderator who started it (for `creator_left`). */
  creator: string;
}

export interface TimerStore {
  /** Makes `timer` the room's timer unless one is running; false when one is. */
  create(roomId: string, timer: RunningTimer): Promise<boolean>;
  get(roomId: string): Promise<RunningTimer | undefined>;
  /**
   * Ends the room's timer, and deletes its ready statuses, if it is still the timer `timerId`;
   * true for the one caller that ended it, false when it was gone or another timer runs.
   */
  take(roomId: string, timerId: string): Promise<boolean>;
  /**
   * Records a participant's ready status if the running timer is `timerId` and has a ready check;
   * false (nothing stored) otherwise, so that no status outlives the timer it was given for.
   */
  setReadyStatus(roomId: string, timerId: string, participantId: string, status: boolean): Promise<boolean>;
  /** The stored statuses of the given participants (those with none are absent). */
  readyStatuses(roomId: string, participantIds: readonly string[]): Promise<Map<string, boolean>>;
  deleteReadyStatus(roomId: string, participantId: string): Promise<void>;
}
