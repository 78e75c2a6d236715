/** Comparison of guessable secrets (room passwords, call-in pins) that leaks nothing through its timing. */
import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/**
 * True when both are equal. Both sides are hashed first, so the comparison takes the same time
 * whatever the lengths and wherever the first difference is (timingSafeEqual needs equal lengths).
 */
export function secretsEqual(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}
