/**
 * A joiner's `join_success` lists who is there (the room's members, and for moderators the waiting
 * room), read after the joiner was made a recipient of the room's events. A participant that
 * arrived shortly before that read may still have its arrival event (`joined`,
 * `joined_waiting_room`) on the way to the joiner, through Redis: the joiner would learn of it
 * twice. So the joiner remembers the recent arrivals its list named and is not sent their arrival
 * event once; a departure event in between (the participant left, and may come back) ends that.
 *
 * What the joiner cannot get again is left out: an arrival whose event this instance's hub had
 * delivered before the joiner became a recipient (`delivered` counts the hub's arrival events,
 * `heldAt` is the count when the joiner was held). While a room fills, that is nearly everyone the
 * list names, and remembering them all cost every joiner a set of the whole room and every later
 * event a look into it (an eighth of a 1,000 fill's CPU). A module that gives no `heldAt`
 * remembers every recent arrival.
 *
 * Bounded: only arrivals of the last few seconds are remembered, per session (a WeakMap), and
 * forgotten after those seconds. Arrival times come from the arriving participant's instance, so a
 * clock of another instance running behind by more than the window lets a duplicate through. The
 * hub's arrivals are kept per present participant (a departure drops its entry), and go with the hub.
 */
import type { MemberRecord } from '../room-state/membership-store.js';
import type { EventPayload, Session } from '../session.js';

/**
 * How long after its arrival a participant's arrival event may still be on its way: publishing
 * follows arriving within milliseconds, so this is ample.
 */
const IN_FLIGHT_MS = 5_000;

/** When a joiner became a recipient: its hub, and how many arrival events that hub had delivered then. */
export interface HeldAt {
  hub: object;
  delivered: number;
}

export interface ListedRecently {
  /** An event reached the hub, before any of its sessions: an arrival is counted, a departure forgets its participant's. */
  delivered(hub: object, payload: EventPayload): void;
  /** The hub's count of arrival events so far, for `HeldAt`. */
  deliveredSoFar(hub: object): number;
  /** The session's list named these participants: remembers the recent arrivals among them it may still be sent. */
  remember(session: Session, listed: readonly MemberRecord[], heldAt?: HeldAt): void;
  /** True for the one arrival event of a remembered participant (consumed); a departure forgets it. */
  withholds(session: Session, payload: EventPayload): boolean;
}

/** A hub's arrival events: how many so far, and per participant the number and join time of its last. */
interface HubArrivals {
  count: number;
  last: Map<string, { joinedAt: unknown; number: number }>;
}

export function listedRecently(now: () => number, events: { arrival: string; departure: string }): ListedRecently {
  const remembered = new WeakMap<Session, Set<string>>();
  const hubs = new WeakMap<object, HubArrivals>();
  const arrivalsOf = (hub: object): HubArrivals => hubs.get(hub) ?? hubs.set(hub, { count: 0, last: new Map() }).get(hub)!;

  /** Whether the hub delivered this participant's arrival before the joiner was held. */
  const deliveredBefore = (heldAt: HeldAt, record: MemberRecord): boolean => {
    const last = hubs.get(heldAt.hub)?.last.get(record.id);
    return last !== undefined && last.number <= heldAt.delivered && last.joinedAt === record.control.joined_at;
  };

  return {
    delivered(hub, payload) {
      if (typeof payload.id !== 'string') return;
      if (payload.message === events.departure) hubs.get(hub)?.last.delete(payload.id);
      if (payload.message !== events.arrival) return;
      const arrivals = arrivalsOf(hub);
      arrivals.last.set(payload.id, { joinedAt: (payload.control as { joined_at?: unknown } | undefined)?.joined_at, number: ++arrivals.count });
    },
    deliveredSoFar: (hub) => hubs.get(hub)?.count ?? 0,
    remember(session, listed, heldAt) {
      // join times are RFC 3339 in UTC as toISOString writes them, which order as text: no parsing
      // the whole room for each joiner
      const since = new Date(now() - IN_FLIGHT_MS).toISOString();
      const recent = new Set<string>();
      for (const record of listed) {
        if (record.control.joined_at >= since && !(heldAt && deliveredBefore(heldAt, record))) recent.add(record.id);
      }
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
