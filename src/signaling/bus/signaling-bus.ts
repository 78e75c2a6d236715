/**
 * The room channel: every event of a room goes through it, so that the participants of one room see
 * the same events whichever instance their socket is on (docs/architecture.md §6). The in-process bus serves
 * one instance; the Redis bus publishes on one channel per room, and each instance subscribes to the
 * rooms it has participants in.
 */

/** Who in the room receives a message. */
export type Audience =
  /** every participant in the room (joined), optionally but one */
  | { to: 'room'; except?: string }
  /** the joined moderators only */
  | { to: 'moderators' }
  /** one participant, in the room, in the waiting room or connected but not yet joined */
  | { to: 'participant'; id: string };

/** An event for some of a room's participants: the server frame's namespace and payload. */
export interface RoomMessage {
  namespace: string;
  payload: { message: string } & Record<string, unknown>;
  audience: Audience;
  /**
   * When it was published, in milliseconds since the epoch (fractional), set by the timed bus
   * (timed.ts) for the delivery latency; a message from an instance that does not set it has none.
   */
  sentAt?: number;
}

export type RoomListener = (message: RoomMessage) => void;

export interface SignalingBus {
  /**
   * Starts receiving the room's messages (those published from now on, by any instance, this one
   * included). Resolves once the subscription is in place. The returned function ends it.
   */
  subscribe(roomId: string, listener: RoomListener): Promise<() => Promise<void>>;
  /** Sends a message to every subscriber of the room, on every instance. */
  publish(roomId: string, message: RoomMessage): Promise<void>;
  close(): Promise<void>;
}
