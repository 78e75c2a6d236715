import { describe, expect, it } from 'vitest';
import { escapeText, foldLine, formatOffset, joinLines, paramValue } from '../../../src/domain/notifications/ics-format.js';

describe('escapeText', () => {
  it('escapes backslash, semicolon, comma and every kind of newline', () => {
    expect(escapeText('a\\b;c,d\ne\r\nf\rg')).toBe('a\\\\b\\;c\\,d\\ne\\nf\\ng');
  });
  it('leaves a colon and quotes alone (they need no escape in TEXT)', () => {
    expect(escapeText('10:00 "x"')).toBe('10:00 "x"');
  });
});

describe('paramValue', () => {
  it('quotes values with : ; or , and drops double quotes and control characters', () => {
    expect(paramValue('Ada Lovelace')).toBe('Ada Lovelace');
    expect(paramValue('Lovelace, Ada')).toBe('"Lovelace, Ada"');
    expect(paramValue('Dr. "Ada": Boss\u0007')).toBe('"Dr. Ada: Boss"');
  });
});

describe('foldLine', () => {
  const octets = (s: string) => Buffer.byteLength(s, 'utf8');

  it('keeps a line of exactly 75 octets whole and folds one of 76', () => {
    expect(foldLine('x'.repeat(75))).toBe('x'.repeat(75));
    expect(foldLine('x'.repeat(76))).toBe(`${'x'.repeat(75)}\r\n x`);
  });

  it('never splits a multi-byte character and keeps every physical line within 75 octets', () => {
    const line = `SUMMARY:${'Grüße 😀 '.repeat(40)}`;
    const physical = foldLine(line).split('\r\n');
    for (const part of physical) expect(octets(part)).toBeLessThanOrEqual(75);
    expect(physical.slice(1).every((part) => part.startsWith(' '))).toBe(true);
    // unfolding (drop CRLF + one space) gives the line back, so no character was cut
    expect(foldLine(line).replace(/\r\n /g, '')).toBe(line);
    expect(physical.some((part) => octets(part) < 75 && octets(part) >= 72)).toBe(true);
  });
});

describe('joinLines', () => {
  it('ends every line with CRLF and nothing with a bare LF', () => {
    const text = joinLines(['BEGIN:VCALENDAR', `X:${'y'.repeat(100)}`, 'END:VCALENDAR']);
    expect(text.endsWith('END:VCALENDAR\r\n')).toBe(true);
    expect(text.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
  });
});

describe('formatOffset', () => {
  it('writes ±HHMM, with seconds only when there are any', () => {
    expect(formatOffset(3600)).toBe('+0100');
    expect(formatOffset(-5 * 3600)).toBe('-0500');
    expect(formatOffset(12 * 3600 + 45 * 60)).toBe('+1245');
    expect(formatOffset(0)).toBe('+0000');
    expect(formatOffset(-(3600 + 30))).toBe('-010030');
  });
});
