/**
 * Counts what is open per key (the signaling sockets of a user, an invite code or an address,
 * issue 22): `acquire` takes one on every key when each is below its limit, and the holder releases
 * it when the thing closes. In-process here (one instance); redis-open-counter.ts counts across
 * instances, and forgets what a dead instance held.
 */
import type { CappedKey } from './window-counter.js';

export type Acquired = { acquired: true; release: () => Promise<void> } | { acquired: false; key: CappedKey };

export interface OpenCounter {
  acquire(keys: readonly CappedKey[]): Promise<Acquired>;
}

export function createLocalOpenCounter(): OpenCounter {
  const open = new Map<string, number>(); // an entry only while something is open
  const release = (keys: readonly CappedKey[]) => {
    for (const { key } of keys) {
      const left = (open.get(key) ?? 0) - 1;
      if (left > 0) open.set(key, left);
      else open.delete(key);
    }
  };
  return {
    // atomic: nothing between the look and the count awaits
    async acquire(keys) {
      const full = keys.find(({ key, limit }) => (open.get(key) ?? 0) >= limit);
      if (full) return { acquired: false, key: full };
      for (const { key } of keys) open.set(key, (open.get(key) ?? 0) + 1);
      return { acquired: true, release: once(async () => release(keys)) };
    },
  };
}

/** A release that counts once, however often it is called. */
export function once(release: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => (done ??= release());
}
