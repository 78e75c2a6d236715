/**
 * Strings a hostile client sends, for the hostile-input properties (test/property): every plane of
 * Unicode, lone surrogates (valid in a JS string and in JSON's `\ud800` escape, not in UTF-8 or
 * PostgreSQL text), NUL and other control characters, zero-width and bidirectional marks,
 * combining sequences, look-alikes of syntax (quotes, `%`, `../`), and strings of a chosen length
 * in characters (code points, as JSON Schema counts them) made of one- or two-unit characters,
 * so that a limit counted in UTF-16 units or in bytes instead shows.
 *
 * Long strings are `Sized` values: fast-check prints them as `sized(unit × n)` in a counterexample
 * instead of a megabyte of text; `JSON.stringify` and `String()` give the real string.
 */
import fc from 'fast-check';

/** A string of `count` repetitions of `unit`: printed short, serialised in full. */
export class Sized {
  constructor(
    readonly unit: string,
    readonly count: number,
  ) {}

  toString(): string {
    return this.unit.repeat(this.count);
  }

  toJSON(): string {
    return this.toString();
  }

  [fc.toStringMethod](): string {
    return `sized(${JSON.stringify(this.unit)} × ${this.count})`;
  }
}

/** A string value as generated: plain, or `Sized`. */
export type Text = string | Sized;

/** One character of each kind the properties mix into strings (each one code point). */
const CHARACTERS = [
  'a',
  'é', // two UTF-8 bytes
  'Ω',
  '中', // three UTF-8 bytes
  '😀', // astral: two UTF-16 units, four UTF-8 bytes
  '𝕏',
  '\u0301', // combining acute accent, alone
  '\u200b', // zero width space
  '\u200f', // right-to-left mark
  '\u202e', // right-to-left override
  '\ufeff', // byte order mark
  '\ufffd',
  '\uffff', // a noncharacter
  '\u0085', // next line
  '\u2028', // line separator
  '\t',
  '\n',
  '\r',
  '\u001b',
  '\u007f',
] as const;

/** Characters that are fine in a JS string and in JSON (as escapes) but not in PostgreSQL text. */
const UNSTORABLE = ['\u0000', '\ud800', '\udfff', '\udc00\ud800'] as const;

/** Strings with syntax of other languages in them: what escapes badly when a layer forgets to escape. */
const SYNTAX = [
  "'; drop table rooms; --",
  '" or 1=1 --',
  '%',
  '%00',
  '%zz',
  '%2e%2e%2f',
  '../../etc/passwd',
  '..',
  '.',
  '\\',
  '${7*7}',
  '{{7*7}}',
  '<script>alert(1)</script>',
  '__proto__',
  'constructor',
  'toString',
  'null',
  'undefined',
  'NaN',
  '-0',
  'true',
  '[]',
  '{}',
  ' ',
  '',
  'a'.repeat(7) + '\u0000' + 'b',
  'Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǵ̗̪̈́ͅo̹̻ͥ',
  'ﷺ',
  'ﬀ',
  'İ', // lower-cases to two code points
  'ß', // upper-cases to two
] as const;

const character = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...CHARACTERS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.constantFrom(...UNSTORABLE) },
);

/** Short strings of every kind: from the lists above, random code points, and mixtures. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...SYNTAX),
  fc.constantFrom(...UNSTORABLE),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: character, minLength: 1, maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
);

/** A unit of one code point that is one, two, three or four UTF-8 bytes and one or two UTF-16 units. */
const LENGTH_UNITS = ['x', 'é', '中', '😀'] as const;

/** Strings of exactly `length` code points (when ≥ 0). */
export const stringOfLength = (length: number): fc.Arbitrary<Text> =>
  fc.constantFrom(...LENGTH_UNITS).map((unit) => (length > 64 ? new Sized(unit, Math.max(0, length)) : unit.repeat(Math.max(0, length))));

/** 1 MiB and one character more, of one-byte characters: over any JSON body limit of 1 MiB. */
const MEBIBYTE = 1_048_576;
export const hugeString: fc.Arbitrary<Text> = fc.constantFrom(new Sized('x', MEBIBYTE + 1), new Sized('😀', MEBIBYTE / 4 + 1), new Sized('\u0000', 65_536));

/** The UTF-8 bytes of one code point; a lone surrogate as its WTF-8 bytes, which no UTF-8 decoder accepts. */
function bytesOf(char: string): number[] {
  const code = char.codePointAt(0)!;
  if (code >= 0xd800 && code <= 0xdfff) return [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)];
  return [...Buffer.from(char, 'utf8')];
}

const percent = (bytes: number[]) => bytes.map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');

/** Like encodeURIComponent, but a lone surrogate is encoded (as WTF-8) instead of throwing. */
export const encodeComponent = (text: string): string =>
  [...text].map((char) => (/[\ud800-\udfff]/.test(char) ? percent(bytesOf(char)) : encodeURIComponent(char))).join('');
