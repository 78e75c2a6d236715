// The generated validators' own runtime (scripts/codegen/validator-runtime.js, copied to generated/)
// answers as ajv's and ajv-formats' helpers that it replaces, on the edges and on random input.
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { describe, expect, it } from 'vitest';
import { formats, ucs2length } from '../../../generated/signaling/validator-runtime.js';

/** ajv's own helper, as its CommonJS code exports it. */
const ucs2lengthOfAjv: (s: string) => number = createRequire(import.meta.url)('ajv/dist/runtime/ucs2length').default;
const theirs = { dateTime: (fullFormats['date-time'] as { validate: (s: string) => boolean }).validate, uri: fullFormats.uri as (s: string) => boolean };
const ours = { dateTime: (formats['date-time'] as { validate: (s: string) => boolean }).validate, uri: formats.uri as (s: string) => boolean };

/** Strings near the formats: ISO dates with their parts swapped for random digits and separators. */
const dateTimeLike = fc
  .tuple(
    fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }),
    fc.array(fc.tuple(fc.nat(30), fc.constantFrom('0', '9', '6', 't', ' ', 'Z', '+', '-', ':', '.', '')), { maxLength: 3 }),
  )
  .map(([date, edits]) => edits.reduce((text, [at, ch]) => text.slice(0, at) + ch + text.slice(at + 1), date.toISOString()));
const uriLike = fc.oneof(
  fc.webUrl({ withQueryParameters: true, withFragments: true }),
  fc.string(),
  fc.constantFrom('urn:x', 'a:', '//host', 'http://[::1]:80/', 'mailto:a@b', 'no scheme/'),
);

describe("the validators' runtime", () => {
  it('counts code points as ajv does', () => {
    expect(ucs2length('a😀b')).toBe(3);
    expect(ucs2length('\ud83d')).toBe(1); // a lone high surrogate at the end
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => ucs2length(s) === ucs2lengthOfAjv(s)),
      { numRuns: 2_000 },
    );
  });

  it('checks date-time as ajv-formats does', () => {
    for (const edge of [
      '2024-02-29T12:00:00Z',
      '2023-02-29T12:00:00Z',
      '2016-12-31T23:59:60Z',
      '2016-12-31T22:59:60-01:00',
      '2016-12-30T23:59:60Z',
      '2024-01-01T00:00:00',
      '2024-01-01 00:00:00+01:00',
    ]) {
      expect([edge, ours.dateTime(edge)]).toEqual([edge, theirs.dateTime(edge)]);
    }
    expect(ours.dateTime('2023-02-29T12:00:00Z')).toBe(false);
    fc.assert(
      fc.property(fc.oneof(dateTimeLike, fc.string()), (s) => ours.dateTime(s) === theirs.dateTime(s)),
      { numRuns: 5_000 },
    );
  });

  it('checks uri as ajv-formats does', () => {
    expect(ours.uri('https://example.test/a?b#c')).toBe(true);
    expect(ours.uri('/relative')).toBe(false);
    fc.assert(
      fc.property(uriLike, (s) => ours.uri(s) === theirs.uri(s)),
      { numRuns: 3_000 },
    );
  });
});
