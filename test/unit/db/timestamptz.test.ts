/**
 * `parseTimestampTz` reads the instants PostgreSQL writes, in a session of any time zone, from their
 * digits and hands every other form to pg's own parser: whatever the form, its value is pg's.
 * Checked over instants across years 1000–9999 with fractions of 0 to 6 digits (PostgreSQL drops
 * trailing zeros) and offsets of whole hours, of minutes and of seconds, at the edges of the fast
 * form, and on the forms it leaves to pg.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { parseTimestampTz } from '../../../src/db/timestamptz.js';

const pgParser = pg.types.getTypeParser(1184, 'text') as (text: string) => Date | number | null;

const valueOf = (parsed: Date | number | null) => (parsed instanceof Date ? parsed.getTime() : parsed);
const agree = (text: string) => expect(valueOf(parseTimestampTz(text)), text).toBe(valueOf(pgParser(text)));

/**
 * An instant as PostgreSQL writes it in a session whose zone is `offsetSeconds` east of UTC, with
 * `micros` (0–999,999) as its fraction: `+HH`, `+HH:MM` when the offset has minutes, `+HH:MM:SS`
 * when it has seconds.
 */
function asPostgresWrites(ms: number, micros: number, offsetSeconds = 0): string {
  const iso = new Date(ms + offsetSeconds * 1000).toISOString(); // 2027-01-04T09:00:00.000Z
  const fraction = micros === 0 ? '' : `.${String(micros).padStart(6, '0')}`.replace(/0+$/, '');
  const size = Math.abs(offsetSeconds);
  const parts = [Math.floor(size / 3600), Math.floor(size / 60) % 60, size % 60];
  while (parts.length > 1 && parts.at(-1) === 0) parts.pop();
  const offset = `${offsetSeconds < 0 ? '-' : '+'}${parts.map((part) => String(part).padStart(2, '0')).join(':')}`;
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction}${offset}`;
}

/** Offsets of real zones: UTC, whole hours at both ends, minutes (India, Newfoundland, Nepal) and local mean times' seconds. */
const OFFSETS = [0, 3600, -5 * 3600, 14 * 3600, -12 * 3600, 5.5 * 3600, -3.5 * 3600, 5 * 3600 + 45 * 60, 3208, -(25 * 60 + 21)];

describe('parseTimestampTz', () => {
  const reads = (pairs: [text: string, iso: string][]) => {
    for (const [text, iso] of pairs) expect(parseTimestampTz(text), text).toEqual(new Date(iso));
  };

  it('reads the UTC form to the millisecond, truncating microseconds as pg does', () => {
    reads([
      ['2027-01-04 09:00:00+00', '2027-01-04T09:00:00Z'],
      ['2027-01-04 09:00:00.5+00', '2027-01-04T09:00:00.500Z'],
      ['2027-01-04 09:00:00.05+00', '2027-01-04T09:00:00.050Z'],
      ['2027-01-04 09:00:00.123999+00', '2027-01-04T09:00:00.123Z'],
      ['1000-01-01 00:00:00+00', '1000-01-01T00:00:00Z'],
      ['9999-12-31 23:59:59.999999+00', '9999-12-31T23:59:59.999Z'],
    ]);
  });

  it("reads the other zones' forms: offsets of hours, minutes and seconds", () => {
    reads([
      ['2027-01-04 10:00:00+01', '2027-01-04T09:00:00Z'],
      ['2027-01-04 04:00:00.25-05', '2027-01-04T09:00:00.250Z'],
      ['2027-01-04 14:30:00+05:30', '2027-01-04T09:00:00Z'],
      ['2027-01-04 05:30:00.123456-03:30', '2027-01-04T09:00:00.123Z'],
      ['1890-01-01 00:53:28+00:53:28', '1890-01-01T00:00:00Z'],
      ['1890-01-01 00:00:00-00:25:21', '1890-01-01T00:25:21Z'],
    ]);
  });

  it("agrees with pg's parser over years 1000–9999, every length of fraction and the zones' offsets", () => {
    const from = Date.UTC(1000, 0, 1);
    const to = Date.UTC(9999, 11, 31, 23, 59, 59);
    let seed = 7;
    const next = () => (seed = (seed * 48271) % 2147483647) / 2147483647; // the same sample on every run
    for (let i = 0; i < 20_000; i++) {
      const second = Math.floor(from / 1000 + next() * ((to - from) / 1000));
      const digits = i % 7; // 0–6 digits of fraction
      const micros = digits === 0 ? 0 : Math.floor(next() * 10 ** digits) * 10 ** (6 - digits);
      agree(asPostgresWrites(second * 1000, micros, OFFSETS[i % OFFSETS.length]));
    }
    for (let micros = 0; micros < 1_000_000; micros += 997) agree(asPostgresWrites(Date.UTC(2027, 2, 28, 1, 30), micros, OFFSETS[micros % OFFSETS.length]));
  });

  it("leaves every other form to pg's parser: years outside 1000–9999, BC, infinity, a fraction or an offset out of form", () => {
    for (const text of [
      '0999-12-31 23:59:59+00',
      '0999-12-31 23:59:59+05:30',
      '0044-03-15 12:00:00+00',
      '0044-03-15 12:00:00+00 BC',
      '10000-01-01 00:00:00+00',
      '2027-01-04 09:00:00.+00',
      '2027-01-04 09:00:00+1',
      '2027-01-04 09:00:00+0100',
      'infinity',
      '-infinity',
    ]) {
      agree(text);
    }
    expect(parseTimestampTz('infinity')).toBe(Infinity);
    expect(parseTimestampTz('0044-03-15 12:00:00+00 BC')).toEqual(pgParser('0044-03-15 12:00:00+00 BC'));
  });
});
