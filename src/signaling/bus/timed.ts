/**
 * A bus that times itself for the metrics: how long each publish takes, and how long each message
 * took from its publication (on any instance) to its receipt here. The publication time travels in
 * the message (`sentAt`); across instances the figure includes the difference between their clocks.
 * Per message: two clock readings and two histogram observations, nothing per socket.
 */
import type { BusTimings } from '../../metrics.js';
import type { RoomMessage, SignalingBus } from './signaling-bus.js';

/** Milliseconds since the epoch, with the monotonic clock's resolution (Date.now() has whole milliseconds). */
const epochMs = () => performance.timeOrigin + performance.now();

export function timedBus(bus: SignalingBus, timings: BusTimings): SignalingBus {
  return {
    subscribe(roomId, listener) {
      return bus.subscribe(roomId, (message) => {
        // a clock behind the publisher's would make it negative: none is shorter than nothing
        if (typeof message.sentAt === 'number') timings.delivered(Math.max(0, epochMs() - message.sentAt) / 1000);
        listener(message);
      });
    },
    async publish(roomId, message) {
      const sentAt = epochMs();
      const stamped: RoomMessage = { namespace: message.namespace, payload: message.payload, audience: message.audience, sentAt };
      await bus.publish(roomId, stamped);
      timings.published((epochMs() - sentAt) / 1000);
    },
    close: () => bus.close(),
  };
}
