import { describe, expect, it } from 'vitest';
import { attachmentDisposition } from '../../../src/http/content-disposition.js';

describe('attachmentDisposition', () => {
  it.each(['agenda-2026_v2.pdf', "it's (final)*.txt", 'a;b=c.txt'])('quotes the printable ASCII name %j as it is', (name) => {
    expect(attachmentDisposition(name)).toBe(`attachment; filename="${name}"`);
  });

  it.each([
    ['a\r\nset-cookie: x=1', 'attachment; filename="a__set-cookie: x=1"; filename*=UTF-8\'\'a%0D%0Aset-cookie%3A%20x%3D1'],
    ['back\\slash', 'attachment; filename="back_slash"; filename*=UTF-8\'\'back%5Cslash'],
    ['emoji 😀.png', 'attachment; filename="emoji _.png"; filename*=UTF-8\'\'emoji%20%F0%9F%98%80.png'],
  ])('keeps %j out of the quoted string and exact in filename*', (name, expected) => {
    const header = attachmentDisposition(name);
    expect(header).toBe(expected);
    expect(header).not.toMatch(/[\r\n]/);
    expect(decodeURIComponent(/filename\*=UTF-8''(.*)$/.exec(header)![1]!)).toBe(name);
  });
});
