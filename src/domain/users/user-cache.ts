import type { User } from './user.js';

/**
 * Remembers the users of recent authenticated requests for a few seconds, so a burst of requests by
 * one user costs one query. Writes through this instance drop the entry at once; writes through
 * another instance (or a deletion) are seen after at most `ttlMs`, the bound on staleness.
 */
export class UserCache {
  private readonly entries = new Map<string, { user: User; expiresAtMs: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number,
  ) {}

  get(issuer: string, subject: string): User | undefined {
    const key = keyOf(issuer, subject);
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAtMs > this.now()) return entry.user;
    this.entries.delete(key);
    return undefined;
  }

  set(user: User): void {
    if (this.ttlMs <= 0) return;
    const key = keyOf(user.oidc_issuer, user.oidc_sub);
    this.entries.delete(key); // re-insert at the end: Map order is the eviction order
    this.entries.set(key, { user, expiresAtMs: this.now() + this.ttlMs });
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }

  forget(user: Pick<User, 'oidc_issuer' | 'oidc_sub'>): void {
    this.entries.delete(keyOf(user.oidc_issuer, user.oidc_sub));
  }
}

// Issuer URLs never contain a newline, so this separator cannot make two pairs collide.
const keyOf = (issuer: string, subject: string) => `${issuer}\n${subject}`;
