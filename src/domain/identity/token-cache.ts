import { createHash } from 'node:crypto';

/**
 * A bounded LRU map whose entries also expire at a given instant. Used to remember verified access
 * tokens until their `exp`, so a known token costs a hash and a map lookup instead of a signature
 * check (issue 7: authenticated requests must not re-verify a known token on every request).
 */
export class ExpiringLru<V> {
  private readonly entries = new Map<string, { value: V; expiresAtMs: number }>();

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.expiresAtMs <= this.now()) return undefined;
    this.entries.set(key, entry); // re-insert: Map order is the recency order
    return entry.value;
  }

  set(key: string, value: V, expiresAtMs: number): void {
    if (expiresAtMs <= this.now()) return;
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAtMs });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
  }
}

/** Cache key of a bearer token: its SHA-256, so the map holds no usable credentials and keys stay short. */
export const tokenCacheKey = (token: string): string => createHash('sha256').update(token).digest('base64url');
