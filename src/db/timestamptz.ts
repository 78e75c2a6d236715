/**
 * `timestamptz` as pg reads it, faster. PostgreSQL writes an instant as its wall time in the
 * session's time zone and that zone's offset: `2027-01-04 09:00:00.123456+00` in a UTC session,
 * `2027-01-04 10:00:00+01`, `2027-01-04 14:30:00+05:30` or, for an old local mean time,
 * `1890-01-01 00:53:28+00:53:28` in others. This reads that form from its digits. pg's own parser
 * (postgres-date) runs three regular expressions per value, and an events page reads some 150
 * instants. Every other form (a year before 1000 or after 9999, BC, infinity) goes to pg's parser,
 * so the values are the same either way (test/unit/db/timestamptz.test.ts).
 */
import pg from 'pg';

const TIMESTAMPTZ_OID = pg.types.builtins.TIMESTAMPTZ;
const pgParser = pg.types.getTypeParser(TIMESTAMPTZ_OID, 'text') as (text: string) => Date | number | null;

/** Where the fraction or the offset starts: after `YYYY-MM-DD HH:MM:SS`. */
const AFTER_SECONDS = '2027-01-04 09:00:00'.length;
const PLUS = 43;
const MINUS = 45;
const COLON = 58;
const DOT = 46;

export function parseTimestampTz(text: string): Date | number | null {
  if (!hasDateAndTime(text)) return pgParser(text);
  const offsetAt = offsetStart(text);
  const offsetSeconds = offsetAt === -1 ? undefined : readOffset(text, offsetAt);
  if (offsetSeconds === undefined) return pgParser(text);
  const year = twoDigits(text, 0) * 100 + twoDigits(text, 2);
  const ms = offsetAt === AFTER_SECONDS ? 0 : fractionMs(text, offsetAt);
  const wall = Date.UTC(year, twoDigits(text, 5) - 1, twoDigits(text, 8), twoDigits(text, 11), twoDigits(text, 14), twoDigits(text, 17), ms);
  return new Date(wall - offsetSeconds * 1000);
}

function twoDigits(text: string, at: number): number {
  return (text.charCodeAt(at) - 48) * 10 + text.charCodeAt(at + 1) - 48;
}

/** The fixed punctuation of `YYYY-MM-DD HH:MM:SS` (which rules out BC and longer years), and a year from 1000. */
function hasDateAndTime(text: string): boolean {
  return (
    text.length > AFTER_SECONDS &&
    text.charCodeAt(0) !== 48 && // a year below 1000 ("0999")
    text.charCodeAt(4) === MINUS &&
    text.charCodeAt(7) === MINUS &&
    text.charCodeAt(10) === 32 && // space
    text.charCodeAt(13) === COLON &&
    text.charCodeAt(16) === COLON
  );
}

/** The index of the offset's sign: right after the seconds, or after `.` and the fraction's digits; -1 for any other form. */
function offsetStart(text: string): number {
  let at = AFTER_SECONDS;
  if (text.charCodeAt(at) === DOT) {
    at++;
    while (at < text.length && isDigit(text.charCodeAt(at))) at++;
  }
  const sign = text.charCodeAt(at);
  return sign === PLUS || sign === MINUS ? at : -1;
}

/** The offset `±HH`, `±HH:MM` or `±HH:MM:SS` from `at` to the end, in seconds east of UTC; undefined for anything else. */
function readOffset(text: string, at: number): number | undefined {
  const length = text.length - at;
  if (length !== 3 && length !== 6 && length !== 9) return undefined;
  let seconds = 0;
  for (let part = at + 1, scale = 3600; part < text.length; part += 3, scale /= 60) {
    if (part > at + 1 && text.charCodeAt(part - 1) !== COLON) return undefined;
    if (!isDigit(text.charCodeAt(part)) || !isDigit(text.charCodeAt(part + 1))) return undefined;
    seconds += twoDigits(text, part) * scale;
  }
  return text.charCodeAt(at) === MINUS ? -seconds : seconds;
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/** The milliseconds of `.f` … `.ffffff` (PostgreSQL drops trailing zeros), truncated as pg's parser does. */
function fractionMs(text: string, offsetAt: number): number {
  let ms = 0;
  for (let i = AFTER_SECONDS + 1, scale = 100; i < offsetAt && scale >= 1; i++, scale /= 10) ms += (text.charCodeAt(i) - 48) * scale;
  return ms;
}
