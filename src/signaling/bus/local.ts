/**
 * The in-process bus (no Redis): one instance only. Delivery is asynchronous, as through Redis, so
 * that no caller depends on a listener having run when `publish` returns; order is kept.
 */
import type { Logger } from '../../logger.js';
import type { RoomListener, SignalingBus } from './signaling-bus.js';

/** `logger` hears of a listener that throws; the other listeners still get the message. */
export function createLocalBus(logger?: Pick<Logger, 'error'>): SignalingBus {
  const rooms = new Map<string, Set<RoomListener>>();
  return {
    async subscribe(roomId, listener) {
      let listeners = rooms.get(roomId);
      if (!listeners) rooms.set(roomId, (listeners = new Set()));
      // a wrapper per subscription, so that subscribing the same function twice gives two deliveries
      const entry: RoomListener = (message) => listener(message);
      listeners.add(entry);
      return async () => {
        listeners.delete(entry);
        if (listeners.size === 0 && rooms.get(roomId) === listeners) rooms.delete(roomId);
      };
    },
    async publish(roomId, message) {
      const listeners = rooms.get(roomId);
      if (!listeners) return;
      const snapshot = [...listeners];
      queueMicrotask(() => {
        for (const listener of snapshot) {
          try {
            listener(message);
          } catch (err) {
            logger?.error({ err, roomId }, 'a signaling bus listener failed');
          }
        }
      });
    },
    async close() {
      rooms.clear();
    },
  };
}
