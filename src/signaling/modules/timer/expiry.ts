/**
 * The countdown expiries this instance arms on its hubs (timer.module.ts): each fires at the
 * countdown's end, tries to take the timer from the store (one instance wins) and, when it took it,
 * publishes `stopped` with `expired`; a failure is tried again after each of a few delays while the
 * hub is open.
 */
import type { RoomHub } from '../../room-hub.js';
import type { ModuleDeps } from '../module.js';
import { publishStopped } from './stopped.js';
import type { TimerStore } from './timer-store.js';

/** When an expiry fails (Redis unreachable), it is tried again after each of these delays. */
const EXPIRY_RETRY_DELAYS_MS = [1_000, 10_000, 60_000];

export interface Expiries {
  /** Arms the countdown's expiry on the hub, unless it is armed there already or the hub has closed. */
  arm(hub: RoomHub, timerId: string, endsAt: string): void;
  disarm(hub: RoomHub, timerId: string): void;
  /** Disarms the hub's expiries (it closed); without a hub, every hub's (the module closes). */
  disarmAll(hub?: RoomHub): void;
}

type Armed = Map<RoomHub, Map<string, () => void>>;

export function createExpiries(deps: ModuleDeps, store: TimerStore): Expiries {
  /**
   * The countdown expiries armed on each of this instance's hubs, by timer id. Usually one; a stale
   * read by a join may arm an older timer beside the running one, whose expiry then finds the timer
   * gone and does nothing.
   */
  const armed: Armed = new Map();
  return {
    arm: (hub, timerId, endsAt) => armExpiry(deps, store, armed, hub, timerId, endsAt),
    disarm: (hub, timerId) => disarm(armed, hub, timerId),
    disarmAll(hub) {
      for (const each of hub ? [hub] : [...armed.keys()]) disarmAll(armed, each);
    },
  };
}

/** Whether the hub is still this instance's hub of its room: a closed one arms nothing. */
function isOpen(deps: ModuleDeps, hub: RoomHub): boolean {
  return deps.hubs().get(hub.roomId) === hub;
}

function armExpiry(deps: ModuleDeps, store: TimerStore, armed: Armed, hub: RoomHub, timerId: string, endsAt: string): void {
  if (armed.get(hub)?.has(timerId) || !isOpen(deps, hub)) return;
  let taken = false;
  // once taken, a retry (the bus failed) only publishes: a second take would find the timer gone
  const expire = async () => {
    taken ||= await store.take(hub.roomId, timerId);
    if (taken) await publishStopped(deps, hub, hub.sessions.values().next().value?.room, timerId, { kind: 'expired' });
  };
  arm(deps, armed, hub, timerId, Date.parse(endsAt), expire, 0);
}

/** Runs `expire` at `atMs`; when it fails, again after the next retry delay, while the hub is open. */
function arm(deps: ModuleDeps, armed: Armed, hub: RoomHub, timerId: string, atMs: number, expire: () => Promise<void>, failures: number): void {
  let hubArmed = armed.get(hub);
  if (!hubArmed) armed.set(hub, (hubArmed = new Map<string, () => void>()));
  const cancel = deps.scheduler.at(atMs, () => {
    disarm(armed, hub, timerId);
    expire().catch((err: unknown) => {
      const retryIn = EXPIRY_RETRY_DELAYS_MS[failures];
      const context = { err, roomId: hub.roomId, timerId, failures: failures + 1 };
      // no retry here when a join armed it again meanwhile, or when the hub closed (no participant here)
      if (armed.get(hub)?.has(timerId) || !isOpen(deps, hub)) return deps.logger.warn(context, 'a countdown expiry failed');
      if (retryIn === undefined) return deps.logger.error(context, 'a countdown expiry failed; the next join arms it again');
      deps.logger.warn(context, 'a countdown expiry failed; trying again');
      arm(deps, armed, hub, timerId, deps.scheduler.now() + retryIn, expire, failures + 1);
    });
  });
  hubArmed.set(timerId, cancel);
}

function disarm(armed: Armed, hub: RoomHub, timerId: string): void {
  const hubArmed = armed.get(hub);
  hubArmed?.get(timerId)?.();
  hubArmed?.delete(timerId);
  if (hubArmed?.size === 0) armed.delete(hub);
}

function disarmAll(armed: Armed, hub: RoomHub): void {
  for (const cancel of armed.get(hub)?.values() ?? []) cancel();
  armed.delete(hub);
}
