import { describe, expect, it } from 'vitest';

import { ExpiringLru } from '../../../src/domain/expiring-lru.js';
import { tokenCacheKey } from '../../../src/domain/identity/token-cache.js';

describe('ExpiringLru', () => {
  it('forgets an entry at its expiry instant', () => {
    let now = 1_000;
    const cache = new ExpiringLru<string>(10, () => now);
    cache.set('a', 'A', 2_000);
    expect(cache.get('a')).toBe('A');
    now = 1_999;
    expect(cache.get('a')).toBe('A');
    now = 2_000;
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('does not store what has already expired', () => {
    const cache = new ExpiringLru<string>(10, () => 5_000);
    cache.set('a', 'A', 5_000);
    expect(cache.size).toBe(0);
  });

  it('evicts the least recently used entry beyond its bound', () => {
    const cache = new ExpiringLru<number>(3, () => 0);
    for (const key of ['a', 'b', 'c']) cache.set(key, 1, 10);
    cache.get('a'); // a is now the most recent; b the oldest
    cache.set('d', 1, 10);
    expect(cache.size).toBe(3);
    expect(cache.get('b')).toBeUndefined();
    expect(['a', 'c', 'd'].map((key) => cache.get(key))).toEqual([1, 1, 1]);
  });

  it('moves a read entry only from the older half: it is evicted no sooner than half the bound of insertions later', () => {
    const cache = new ExpiringLru<number>(4, () => 0);
    for (const key of ['a', 'b', 'c', 'd']) cache.set(key, 1, 10);
    cache.get('c'); // among the newest two: stays where it is (order a b c d)
    cache.get('a'); // the oldest: moves to the newest end (order b c d a)
    cache.set('e', 1, 10); // evicts b
    cache.set('f', 1, 10); // evicts c, two insertions after its read (d, read by nobody, is newer)
    expect(['b', 'c'].map((key) => cache.get(key))).toEqual([undefined, undefined]);
    expect(['d', 'a', 'e', 'f'].map((key) => cache.get(key))).toEqual([1, 1, 1, 1]);
  });

  it('stays bounded under many distinct keys', () => {
    const cache = new ExpiringLru<number>(100, () => 0);
    for (let i = 0; i < 10_000; i++) cache.set(String(i), i, 10);
    expect(cache.size).toBe(100);
    expect(cache.get('9999')).toBe(9999);
    expect(cache.get('0')).toBeUndefined();
  });

  it('sweeps out the expired entries nobody asks for again, and only those', () => {
    let now = 0;
    const cache = new ExpiringLru<number>(Infinity, () => now);
    cache.set('short', 1, 10);
    cache.set('long', 2, 20);
    now = 10;
    cache.sweep();
    expect(cache.size).toBe(1);
    expect(cache.get('long')).toBe(2);
  });
});

describe('tokenCacheKey', () => {
  it('is a fixed-size digest that differs per token', () => {
    const key = tokenCacheKey('x'.repeat(10_000));
    expect(key).toHaveLength(43);
    expect(key).not.toContain('x');
    expect(tokenCacheKey('a')).not.toBe(tokenCacheKey('b'));
  });
});
