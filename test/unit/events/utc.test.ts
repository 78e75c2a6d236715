/**
 * `utc`, the instants of every event answer: RFC 3339 in UTC as `toISOString` writes it, without
 * the fraction when it is zero. Checked at the edges of years 0000–9999 and past them (toISOString's
 * extended form), and over a year of instants with 0, 1, 10 and 100 ms; an invalid date is refused
 * as toISOString refuses it.
 */
import { describe, expect, it } from 'vitest';
import { utc } from '../../../src/domain/events/event-view.js';

const reference = (date: Date) => date.toISOString().replace('.000Z', 'Z');

describe('utc', () => {
  it('writes what toISOString writes, less a zero fraction', () => {
    expect(utc(new Date('2026-12-01T09:00:00Z'))).toBe('2026-12-01T09:00:00Z');
    expect(utc(new Date('2026-12-01T09:00:00.007Z'))).toBe('2026-12-01T09:00:00.007Z');
    expect(utc(new Date('2027-03-28T01:30:00.120+01:00'))).toBe('2027-03-28T00:30:00.120Z');
  });

  it('agrees with toISOString over years, months, days, hours and milliseconds, at the edges of its range and past them', () => {
    // the first instant of year 0 (Date.UTC maps years 0–99 to 1900–1999)
    const yearZero = new Date(0);
    yearZero.setUTCFullYear(0, 0, 1);
    const instants = [
      yearZero.getTime() - 1,
      yearZero.getTime(),
      yearZero.getTime() + 999,
      Date.UTC(999, 11, 31, 23, 59, 59, 999),
      Date.UTC(1970, 0, 1),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999) + 1,
      8.64e15,
      -8.64e15,
    ];
    for (let ms = Date.UTC(2027, 0, 1); ms < Date.UTC(2028, 0, 1); ms += 7_919_987) instants.push(ms, ms + 1, ms + 10, ms + 100);
    for (const ms of instants) expect(utc(new Date(ms))).toBe(reference(new Date(ms)));
  });

  it('refuses an invalid date as toISOString does', () => {
    expect(() => utc(new Date(Number.NaN))).toThrow(RangeError);
  });
});
