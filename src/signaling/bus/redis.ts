/**
 * The Redis bus: one pub/sub channel per room (`convene:signaling:room:<roomId>`), so that every
 * instance with participants of a room receives the room's events whichever instance published
 * them. Publishing goes through the shared connection; receiving needs a connection in subscriber
 * mode, which can do nothing else, so the bus opens one of its own (`redis.duplicate()`, on the
 * first subscribe) and every room of this instance shares it. Several local listeners of one room
 * share one SUBSCRIBE (counted; the last one out UNSUBSCRIBEs).
 *
 * Order: Redis delivers the messages of one publishing connection in the order it received them,
 * and the instance publishes through one connection, so each instance's messages arrive in order.
 *
 * Redis restarts: ioredis reconnects and, with `autoResubscribe` (its default, kept), subscribes
 * to the same channels again. Pub/sub keeps nothing: whatever was published while the subscriber
 * was disconnected is lost for this instance's sessions (events of that gap; a countdown's
 * `started` seen by no hub here arms no expiry here, which another instance's atomic take still
 * covers). Subscribes made meanwhile wait in ioredis's offline queue: they resolve after a reconnect
 * within the connection's `maxRetriesPerRequest` attempts, and fail after that (the room hub does
 * not open; its socket closes with 1011).
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../../logger.js';
import type { RoomListener, RoomMessage, SignalingBus } from './signaling-bus.js';

const CHANNEL_PREFIX = 'convene:signaling:room:';
export const roomChannel = (roomId: string) => `${CHANNEL_PREFIX}${roomId}`;

/** This instance's subscription to one room's channel. */
interface Subscription {
  listeners: Set<RoomListener>;
  /** Settles when Redis acknowledged the SUBSCRIBE. */
  ready: Promise<void>;
  /**
   * Set just before the SUBSCRIBE is sent: messages on the channel before then belong to an
   * earlier subscription being ended (UNSUBSCRIBE not yet answered) and are not this one's.
   */
  active: boolean;
}

/** `onConnectionError` hears of each error of the subscriber connection (for the metrics). */
export function createRedisBus(redis: Redis, logger: Logger, onConnectionError?: () => void): SignalingBus {
  let subscriber: Redis | undefined;
  let closed = false;
  const subscriptions = new Map<string, Subscription>();
  /** UNSUBSCRIBEs not yet answered, by channel: a new SUBSCRIBE of the channel waits for its one. */
  const leaving = new Map<string, Promise<void>>();

  function connectSubscriber(): Redis {
    const connection = redis.duplicate({ autoResubscribe: true });
    let lost = false;
    connection.on('error', (err) => {
      onConnectionError?.();
      logger.warn({ err }, 'redis subscriber connection error');
    });
    connection.on('reconnecting', () => (lost = true));
    connection.on('ready', () => {
      if (lost) logger.warn('redis subscriber reconnected: room events published while it was away are lost for this instance');
    });
    connection.on('message', deliver);
    return connection;
  }

  function deliver(channel: string, raw: string): void {
    const subscription = subscriptions.get(channel);
    if (!subscription?.active) return;
    let message: RoomMessage;
    try {
      const parsed: unknown = JSON.parse(raw);
      if (!isRoomMessage(parsed)) throw new Error('not a room message');
      message = parsed;
    } catch (err) {
      logger.error({ err, channel }, 'dropped a malformed signaling bus message');
      return;
    }
    // a snapshot: listeners leaving or arriving during the delivery do not change who gets this one
    for (const listener of [...subscription.listeners]) {
      try {
        listener(message);
      } catch (err) {
        logger.error({ err, channel }, 'a signaling bus listener failed');
      }
    }
  }

  function open(channel: string): Subscription {
    const connection = (subscriber ??= connectSubscriber());
    const subscription: Subscription = { listeners: new Set(), active: false, ready: Promise.resolve() };
    subscription.ready = (leaving.get(channel) ?? Promise.resolve()).then(async () => {
      subscription.active = true;
      await connection.subscribe(channel);
    });
    subscriptions.set(channel, subscription);
    return subscription;
  }

  async function leave(channel: string, subscription: Subscription, listener: RoomListener): Promise<void> {
    subscription.listeners.delete(listener);
    if (subscription.listeners.size > 0 || subscriptions.get(channel) !== subscription) return;
    subscriptions.delete(channel);
    if (closed || !subscriber) return;
    const done = subscriber
      .unsubscribe(channel)
      .then(
        () => undefined,
        (err: unknown) => logger.warn({ err, channel }, 'redis unsubscribe failed'),
      )
      .finally(() => {
        if (leaving.get(channel) === done) leaving.delete(channel);
      });
    leaving.set(channel, done);
    await done;
  }

  return {
    async subscribe(roomId, listener) {
      if (closed) throw new Error('the signaling bus is closed');
      const channel = roomChannel(roomId);
      const subscription = subscriptions.get(channel) ?? open(channel);
      // a wrapper per subscription, so that subscribing the same function twice gives two deliveries
      const entry: RoomListener = (message) => listener(message);
      subscription.listeners.add(entry);
      try {
        await subscription.ready;
      } catch (err) {
        subscription.listeners.delete(entry);
        if (subscription.listeners.size === 0 && subscriptions.get(channel) === subscription) subscriptions.delete(channel);
        throw err;
      }
      let left: Promise<void> | undefined;
      return () => (left ??= leave(channel, subscription, entry));
    },
    async publish(roomId, message) {
      await redis.publish(roomChannel(roomId), JSON.stringify(message));
    },
    async close() {
      if (closed) return;
      closed = true;
      subscriptions.clear();
      // the shared connection belongs to the caller; only the subscriber is this bus's own
      await subscriber?.quit().catch(() => subscriber?.disconnect());
    },
  };
}

const AUDIENCES = new Set(['room', 'moderators', 'participant']);

/** Enough of a RoomMessage's shape that delivering it cannot throw on a missing part. */
function isRoomMessage(value: unknown): value is RoomMessage {
  // any part may be missing or null: that is what this checks
  const message = value as { [K in keyof RoomMessage]: RoomMessage[K] | null } | null;
  return (
    typeof message === 'object' &&
    message !== null &&
    typeof message.namespace === 'string' &&
    typeof message.payload === 'object' &&
    message.payload !== null &&
    typeof message.payload.message === 'string' &&
    typeof message.audience === 'object' &&
    message.audience !== null &&
    AUDIENCES.has(message.audience.to)
  );
}
