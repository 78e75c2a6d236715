/**
 * `timestamptz` as pg reads it, faster. PostgreSQL writes an instant in a UTC session as
 * `2027-01-04 09:00:00.123456+00`; this reads that form from its digits. pg's own parser
 * (postgres-date) runs three regular expressions per value, and an events page reads some 150
 * instants. Every other form (another session time zone, a year before 1000 or after 9999, BC,
 * infinity) goes to pg's parser, so the values are the same either way
 * (test/unit/db/timestamptz.test.ts).
 */
import pg from 'pg';

const TIMESTAMPTZ_OID = pg.types.builtins.TIMESTAMPTZ;
const pgParser = pg.types.getTypeParser(TIMESTAMPTZ_OID, 'text') as (text: string) => Date | number | null;

const SHORTEST = '2027-01-04 09:00:00+00'.length;
const LONGEST = '2027-01-04 09:00:00.123456+00'.length;

export function parseTimestampTz(text: string): Date | number | null {
  const n = text.length;
  if (n < SHORTEST || n > LONGEST || !endsInUtc(text, n) || text.charCodeAt(0) === 48 /* a year below 1000 */) return pgParser(text);
  const year = twoDigits(text, 0) * 100 + twoDigits(text, 2);
  const ms = n === SHORTEST ? 0 : fractionMs(text, n);
  return new Date(Date.UTC(year, twoDigits(text, 5) - 1, twoDigits(text, 8), twoDigits(text, 11), twoDigits(text, 14), twoDigits(text, 17), ms));
}

function twoDigits(text: string, at: number): number {
  return (text.charCodeAt(at) - 48) * 10 + text.charCodeAt(at + 1) - 48;
}

/** `+00` at the end, and the fixed punctuation of `YYYY-MM-DD HH:MM:SS` (which rules out BC and longer years). */
function endsInUtc(text: string, n: number): boolean {
  return (
    text.charCodeAt(n - 3) === 43 && // +
    text.charCodeAt(n - 2) === 48 &&
    text.charCodeAt(n - 1) === 48 &&
    text.charCodeAt(4) === 45 && // -
    text.charCodeAt(7) === 45 &&
    text.charCodeAt(10) === 32 && // space
    text.charCodeAt(13) === 58 && // :
    text.charCodeAt(16) === 58
  );
}

/** The milliseconds of `.f` … `.ffffff` (PostgreSQL drops trailing zeros), truncated as pg's parser does. */
function fractionMs(text: string, n: number): number {
  let ms = 0;
  for (let i = 20, scale = 100; i < n - 3 && scale >= 1; i++, scale /= 10) ms += (text.charCodeAt(i) - 48) * scale;
  return ms;
}
