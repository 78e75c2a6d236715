/**
 * RFC 5545 content-line formatting: TEXT escaping (§3.3.11), parameter quoting (§3.2), line folding
 * at 75 octets without splitting a UTF-8 character (§3.1), CRLF endings, and the DATE / DATE-TIME
 * value forms.
 */
import type { LocalTime } from '../time/zones.js';

const MAX_LINE_OCTETS = 75;

/** A TEXT value: backslash, semicolon, comma and newlines escaped. */
export function escapeText(value: string): string {
  return value
    .replace(/\\/g, '\\\\')
    .replace(/;/g, '\\;')
    .replace(/,/g, '\\,')
    .replace(/\r\n|\r|\n/g, '\\n');
}

/**
 * A parameter value: quoted when it holds `:`, `;` or `,`. A double quote cannot appear in a
 * parameter at all, and control characters are not allowed, so both are dropped.
 */
export function paramValue(value: string): string {
  // eslint-disable-next-line no-control-regex -- removing control characters is the point
  const clean = value.replace(/["\u0000-\u001f\u007f]/g, '');
  return /[:;,]/.test(clean) ? `"${clean}"` : clean;
}

/** Splits one content line into folded physical lines of at most 75 octets each. */
export function foldLine(line: string): string {
  const chunks: string[] = [];
  let current = '';
  let octets = 0;
  for (const char of line) {
    const size = Buffer.byteLength(char, 'utf8');
    // a continuation line starts with one space, which counts towards its 75 octets
    if (octets + size > MAX_LINE_OCTETS) {
      chunks.push(current);
      current = ' ';
      octets = 1;
    }
    current += char;
    octets += size;
  }
  chunks.push(current);
  return chunks.join('\r\n');
}

/** Joins content lines into an iCalendar object: folded, CRLF after every line. */
export function joinLines(lines: readonly string[]): string {
  return lines.map((line) => `${foldLine(line)}\r\n`).join('');
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `YYYYMMDD`. */
export function formatDate(t: Pick<LocalTime, 'year' | 'month' | 'day'>): string {
  return `${pad(t.year, 4)}${pad(t.month)}${pad(t.day)}`;
}

/** `YYYYMMDDTHHMMSS` (local, to go with a TZID). */
export function formatLocalDateTime(t: LocalTime): string {
  return `${formatDate(t)}T${pad(t.hour)}${pad(t.minute)}${pad(t.second)}`;
}

/** `YYYYMMDDTHHMMSSZ`. */
export function formatUtcDateTime(instant: Date): string {
  return instant
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

/** A UTC offset as `+HHMM` (or `+HHMMSS` when it has seconds). */
export function formatOffset(seconds: number): string {
  const sign = seconds < 0 ? '-' : '+';
  const abs = Math.abs(seconds);
  const hms = `${pad(Math.floor(abs / 3600))}${pad(Math.floor((abs % 3600) / 60))}`;
  return abs % 60 === 0 ? `${sign}${hms}` : `${sign}${hms}${pad(abs % 60)}`;
}
