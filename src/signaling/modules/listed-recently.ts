/**
 * A joiner's `join_success` lists who is there (the room's members, and for moderators the waiting
 * room), read after the joiner was made a recipient of the room's events. A participant that
 * arrived shortly before that read may still have its arrival event (`joined`,
 * `joined_waiting_room`) on the way to the joiner, through Redis: the joiner would learn of it
 * twice. So the joiner remembers the recent arrivals its list named and is not sent their arrival
 * event once; a departure event in between (the participant left, and may come back) ends that.
 *
 * Bounded: only arrivals of the last few seconds are remembered, per session (a WeakMap), and
 * forgotten after those seconds. Arrival times come from the arriving participant's instance, so a
 * clock of another instance running behind by more than the window lets a duplicate through.
 */
import type { MemberRecord } from '../room-state/membership-store.js';
import type { EventPayload, Session } from '../session.js';

/**
 * How long after its arrival a participant's arrival event may still be on its way: publishing
 * follows arriving within milliseconds, so this is ample.
 */
const IN_FLIGHT_MS = 5_000;

export interface ListedRecently {
  /** The session's list named these participants: remembers the recent arrivals among them. */
  remember(session: Session, listed: readonly MemberRecord[]): void;
  /** True for the one arrival event of a remembered participant (consumed); a departure forgets it. */
  withholds(session: Session, payload: EventPayload): boolean;
}

export function listedRecently(now: () => number, events: { arrival: string; departure: string }): ListedRecently {
  const remembered = new WeakMap<Session, Set<string>>();
  return {
    remember(session, listed) {
      // join times are RFC 3339 in UTC as toISOString writes them, which order as text: no parsing
      // the whole room for each joiner
      const since = new Date(now() - IN_FLIGHT_MS).toISOString();
      const recent = new Set<string>();
      for (const record of listed) if (record.control.joined_at >= since) recent.add(record.id);
      if (recent.size === 0) return;
      remembered.set(session, recent);
      // housekeeping on the real clock: it frees memory and decides nothing
      setTimeout(() => {
        if (remembered.get(session) === recent) remembered.delete(session);
      }, IN_FLIGHT_MS).unref();
    },
    withholds(session, payload) {
      const recent = remembered.get(session);
      if (!recent || typeof payload.id !== 'string') return false;
      if (payload.message === events.departure) recent.delete(payload.id);
      return payload.message === events.arrival && recent.delete(payload.id);
    },
  };
}
