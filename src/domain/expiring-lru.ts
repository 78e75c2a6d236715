/**
 * A bounded LRU map whose entries also expire at a given instant. It remembers verified access tokens
 * until their `exp` (a known token costs a hash and a lookup, not a signature check) and the users of
 * recent requests for a few seconds (a burst of requests costs one query). With `maxEntries` Infinity
 * it is a plain expiring map (the in-process signaling store and rate limiter), emptied by `sweep`.
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

  delete(key: string): void {
    this.entries.delete(key);
  }

  /** Drops every expired entry, for entries nobody touches again. */
  sweep(): void {
    const now = this.now();
    for (const [key, entry] of this.entries) if (entry.expiresAtMs <= now) this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
  }
}
