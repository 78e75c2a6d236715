// The error codes are written down three times, and these checks keep them one: the table of error
// codes in the contract's description (what /docs shows, with the anchors documentation_url names),
// components.schemas.ErrorCode (what the generated ErrorCode union comes from) and the HTTP status
// table of src/http/error-status.ts. Each code also has a factory in src/errors.ts.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../generated/error-codes.js';
import { openapiDocument as doc } from '../../generated/openapi-document.js';
import { HTTP_STATUS } from '../../src/http/error-status.js';

const ROW = /^\| <a id="error-([a-z_]+)"><\/a>`([a-z_]+)` \| (\d{3}) \| (.*) \|$/gm;
const table = [...String(doc.info.description).matchAll(ROW)].map(([, anchor, code, status, meaning]) => ({
  anchor,
  code: code!,
  status: Number(status),
  meaning,
}));
const schema = doc.components.schemas.ErrorCode as { oneOf: { const: string; description: string }[] };

describe('error codes', () => {
  it('reads the table of the contract', () => {
    expect(table.length).toBeGreaterThan(20);
    for (const row of table) expect(row.anchor, row.code).toBe(row.code);
  });

  it('has the same codes, in the same order and with the same meanings, in the table and in ErrorCode', () => {
    expect(schema.oneOf.map((variant) => ({ code: variant.const, meaning: variant.description }))).toEqual(
      table.map(({ code, meaning }) => ({ code, meaning })),
    );
    expect([...ERROR_CODES]).toEqual(table.map((row) => row.code));
  });

  it('answers each code over HTTP with the status the table gives it', () => {
    expect(HTTP_STATUS).toEqual(Object.fromEntries(table.map((row) => [row.code, row.status])));
  });

  it('has a factory for every code in src/errors.ts', () => {
    const source = readFileSync('src/errors.ts', 'utf8');
    const made = new Set([...source.matchAll(/new DomainError\('([a-z_]+)'/g)].map((m) => m[1]));
    expect([...made].sort()).toEqual([...ERROR_CODES].sort());
  });
});
