/**
 * A bounded LRU map whose entries also expire at a given instant. It remembers verified access tokens
 * until their `exp` (a known token costs a hash and a lookup, not a signature check) and the users of
 * recent requests for a few seconds (a burst of requests costs one query). With `maxEntries` Infinity
 * it is a plain expiring map (the in-process signaling store and rate limiter), emptied by `sweep`.
 *
 * Least recently used, to within half the bound: a read moves its entry to the newest end only when
 * the entry is among the older half (more than `maxEntries / 2` entries were put after it), so a read
 * entry is evicted no sooner than `maxEntries / 2` insertions later. Moving an entry is a delete and
 * an insert in the Map, and every authenticated request read two caches: now a run of requests by
 * the same users reads without moving anything, and an unbounded map never moves at all.
 */
export class ExpiringLru<V> {
  private readonly entries = new Map<string, { value: V; expiresAtMs: number; putAs: number }>();
  /** Entries put so far, counting moves: an entry's `putAs` is this count when it was put last. */
  private puts = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAtMs <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    if (this.puts - entry.putAs >= this.maxEntries / 2) {
      // re-insert: Map order is the recency order
      this.entries.delete(key);
      entry.putAs = ++this.puts;
      this.entries.set(key, entry);
    }
    return entry.value;
  }

  set(key: string, value: V, expiresAtMs: number): void {
    if (expiresAtMs <= this.now()) return;
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAtMs, putAs: ++this.puts });
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
