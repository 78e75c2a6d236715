/**
 * The `stopped` event of the timer module (timer.module.ts), shared by its stop, its expiries (expiry.ts) and a creator's departure.
 */
import type { TimerStoppedEvent } from '../../../../generated/signaling/types.js';
import type { RoomContext } from '../../room-context.js';
import type { RoomHub } from '../../room-hub.js';
import type { ModuleDeps } from '../module.js';

export const NAMESPACE = 'timer';

export type StoppedFields = Omit<TimerStoppedEvent['payload'], 'message' | 'timer_id'>;

/** Tells the room, and the webhooks, that the timer stopped (the caller took it from the store: of all instances, only it). */
export function publishStopped(deps: ModuleDeps, hub: RoomHub, room: RoomContext | undefined, timerId: string, fields: StoppedFields): Promise<void> {
  if (room) deps.webhooks?.emit(room, 'timer.stopped', { room_id: room.roomId, timer_id: timerId, reason: fields.kind }, `timer.stopped:${timerId}`);
  return hub.publish({ namespace: NAMESPACE, payload: { message: 'stopped', timer_id: timerId, ...fields }, audience: { to: 'room' } });
}
