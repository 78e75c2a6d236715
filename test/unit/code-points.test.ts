import { describe, expect, it } from 'vitest';
import { codePointLength, cutToCodePoints } from '../../src/domain/code-points.js';

describe('text lengths in code points, as the contract counts them', () => {
  it('counts a surrogate pair as one and a lone surrogate as one', () => {
    expect(codePointLength('')).toBe(0);
    expect(codePointLength('abc')).toBe(3);
    expect(codePointLength('a😀b')).toBe(3);
    expect('a😀b'.length).toBe(4);
    expect(codePointLength('\uD800x')).toBe(2);
    expect(codePointLength('👩‍👩‍👧')).toBe(5); // a family emoji: three people and two joiners
  });

  it('cuts after the given number of code points, never inside a pair', () => {
    expect(cutToCodePoints('a😀b', 0)).toBe('');
    expect(cutToCodePoints('a😀b', 1)).toBe('a');
    expect(cutToCodePoints('a😀b', 2)).toBe('a😀');
    expect(cutToCodePoints('a😀b', 3)).toBe('a😀b');
    expect(cutToCodePoints('a😀b', 10)).toBe('a😀b');
    expect(cutToCodePoints('😀'.repeat(150), 100)).toBe('😀'.repeat(100));
  });
});
