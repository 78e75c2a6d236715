import { describe, expect, it } from 'vitest';

import { randomAlphanumeric } from '../../../src/domain/tickets/random-token.js';
import { secretsEqual } from '../../../src/domain/tickets/secrets.js';

describe('randomAlphanumeric', () => {
  it('gives 64 characters of [A-Za-z0-9] by default', () => {
    for (let i = 0; i < 100; i++) expect(randomAlphanumeric()).toMatch(/^[A-Za-z0-9]{64}$/);
  });

  it('uses every character of the alphabet about equally often', () => {
    const counts = new Map<string, number>();
    const sample = Array.from({ length: 4000 }, () => randomAlphanumeric()).join('');
    for (const c of sample) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // ≈ 4129 each (σ ≈ 64); a plain `byte % 62` would give the first 8 characters 21 % more than that
    const expected = sample.length / 62;
    for (const n of counts.values()) expect(Math.abs(n - expected)).toBeLessThan(expected * 0.1);
  });

  it('never repeats itself', () => {
    const tokens = new Set(Array.from({ length: 2_000 }, () => randomAlphanumeric()));
    expect(tokens.size).toBe(2_000);
  });
});

describe('secretsEqual', () => {
  it('is true only for the same string', () => {
    expect(secretsEqual('correct-horse', 'correct-horse')).toBe(true);
    expect(secretsEqual('correct-horse', 'correct-hors')).toBe(false);
    expect(secretsEqual('', 'x')).toBe(false);
    expect(secretsEqual('Ä', 'A')).toBe(false);
    expect(secretsEqual('', '')).toBe(true);
  });
});
