import { describe, expect, it } from 'vitest';
import { DomainError } from '../../../src/errors.js';
import { httpError } from '../../../src/http/errors.js';
import {
  formatInstanceId,
  isOccurrence,
  lastOccurrenceStart,
  occurrences,
  parseInstanceId,
  validatePattern,
  type Series,
} from '../../../src/domain/events/recurrence.js';

const HOUR = 3_600_000;

function series(start: string, pattern: string[], timezone = 'Europe/Berlin', isAllDay = false): Series {
  return { start: new Date(start), timezone, isAllDay, pattern };
}

function starts(of: Series, options: Partial<Parameters<typeof occurrences>[1]> = {}): string[] {
  return occurrences(of, { durationMs: HOUR, limit: 100, ...options }).map((date) => date.toISOString());
}

function invalidEventMessage(of: Series): string {
  try {
    validatePattern(of);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect(httpError(error as DomainError).status).toBe(400);
    expect((error as DomainError).code).toBe('invalid_event');
    return (error as DomainError).message;
  }
  throw new Error('validatePattern accepted the series');
}

describe('wall-clock times across DST', () => {
  it('keeps a 10:00 Berlin weekly meeting at 10:00 local', () => {
    expect(starts(series('2025-03-20T09:00:00Z', ['RRULE:FREQ=WEEKLY;COUNT=4']))).toEqual([
      '2025-03-20T09:00:00.000Z',
      '2025-03-27T09:00:00.000Z',
      '2025-04-03T08:00:00.000Z',
      '2025-04-10T08:00:00.000Z',
    ]);
  });

  it('moves a time inside the spring gap forward by the gap (RFC 5545)', () => {
    // 02:30 does not exist on 2025-03-30 in Berlin: it is read with the offset before the gap (03:30 CEST)
    expect(starts(series('2025-03-29T01:30:00Z', ['RRULE:FREQ=DAILY;COUNT=3']))).toEqual([
      '2025-03-29T01:30:00.000Z',
      '2025-03-30T01:30:00.000Z',
      '2025-03-31T00:30:00.000Z',
    ]);
  });

  it('takes the first of two instants in the autumn overlap', () => {
    expect(starts(series('2025-10-25T00:30:00Z', ['RRULE:FREQ=DAILY;COUNT=3']))).toEqual([
      '2025-10-25T00:30:00.000Z',
      '2025-10-26T00:30:00.000Z',
      '2025-10-27T01:30:00.000Z',
    ]);
  });

  it('compares a UTC UNTIL as an instant', () => {
    const until = (value: string) => starts(series('2025-10-28T22:30:00Z', [`RRULE:FREQ=DAILY;UNTIL=${value}`]));
    expect(until('20251030T223000Z')).toHaveLength(3);
    expect(until('20251030T222959Z')).toHaveLength(2);
  });

  it('reads a local UNTIL and a DATE UNTIL in the series zone', () => {
    expect(starts(series('2025-10-28T22:30:00Z', ['RRULE:FREQ=DAILY;UNTIL=20251030T233000']))).toHaveLength(3);
    expect(starts(series('2025-10-28T22:30:00Z', ['RRULE:FREQ=DAILY;UNTIL=20251030']))).toHaveLength(3);
  });
});

describe('RFC 5545 semantics where ical.js departs from them', () => {
  it('counts a DTSTART that is not on the rule as the first occurrence', () => {
    // Wednesday start, rule on Mondays: DTSTART plus two Mondays make COUNT=3
    expect(starts(series('2025-03-19T09:00:00Z', ['RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=3']))).toEqual([
      '2025-03-19T09:00:00.000Z',
      '2025-03-24T09:00:00.000Z',
      '2025-03-31T08:00:00.000Z',
    ]);
  });

  it('keeps DTSTART in a series of RDATEs only', () => {
    expect(starts(series('2025-03-19T09:00:00Z', ['RDATE;TZID=Europe/Berlin:20250401T100000,20250402T110000']))).toEqual([
      '2025-03-19T09:00:00.000Z',
      '2025-04-01T08:00:00.000Z',
      '2025-04-02T09:00:00.000Z',
    ]);
  });

  it('skips Feb 29 in years without one', () => {
    const leap = series('2024-02-29T00:00:00Z', ['RRULE:FREQ=YEARLY;COUNT=3'], 'Europe/Berlin', true);
    expect(starts(leap)).toEqual(['2024-02-29T00:00:00.000Z', '2028-02-29T00:00:00.000Z', '2032-02-29T00:00:00.000Z']);
  });

  it('finds the Monday of ISO week 1 (BYWEEKNO)', () => {
    const rule = series('2024-12-29T22:00:00Z', ['RRULE:FREQ=YEARLY;BYWEEKNO=1;BYDAY=MO;COUNT=4'], 'Australia/Sydney');
    expect(starts(rule)).toEqual(['2024-12-29T22:00:00.000Z', '2025-12-28T22:00:00.000Z', '2027-01-03T22:00:00.000Z', '2028-01-02T22:00:00.000Z']);
  });
});

describe('exclusions and additions', () => {
  it('removes every occurrence on the local date of an EXDATE;VALUE=DATE', () => {
    const daily = series('2025-03-18T23:30:00Z', ['RRULE:FREQ=DAILY;COUNT=3', 'EXDATE;VALUE=DATE:20250320']);
    // 00:30 Berlin on the 20th is 23:30Z on the 19th
    expect(starts(daily)).toEqual(['2025-03-18T23:30:00.000Z', '2025-03-20T23:30:00.000Z']);
  });

  it('adds an RDATE;VALUE=DATE at the start time of day', () => {
    expect(starts(series('2025-03-20T09:00:00Z', ['RDATE;VALUE=DATE:20250405']))).toEqual(['2025-03-20T09:00:00.000Z', '2025-04-05T08:00:00.000Z']);
  });

  it('applies an EXRULE', () => {
    const weekdays = series('2025-03-17T08:00:00Z', ['RRULE:FREQ=DAILY;COUNT=10', 'EXRULE:FREQ=WEEKLY;BYDAY=SA,SU']);
    expect(starts(weekdays).map((start) => new Date(start).getUTCDay())).toEqual([1, 2, 3, 4, 5, 1, 2, 3]);
  });

  it('merges several RRULEs in order without repeats', () => {
    const merged = series('2025-03-03T08:00:00Z', ['RRULE:FREQ=WEEKLY;COUNT=3', 'RRULE:FREQ=WEEKLY;BYDAY=MO,WE;COUNT=3']);
    expect(starts(merged)).toEqual(['2025-03-03T08:00:00.000Z', '2025-03-05T08:00:00.000Z', '2025-03-10T08:00:00.000Z', '2025-03-17T08:00:00.000Z']);
  });
});

describe('validatePattern', () => {
  const start = '2025-03-20T09:00:00Z';
  it.each([
    'RRULE:FREQ=HOURLY',
    'FREQ=MINUTELY;COUNT=3',
    'RRULE:FREQ=SECONDLY;COUNT=2',
    'RRULE:FREQ=FORTNIGHTLY',
    'RRULE:COUNT=2',
    'RRULE',
    'RRULE:',
    'DTSTART:20250101T000000',
    'RRULE;X-FOO=1:FREQ=DAILY',
    'RRULE:FREQ=DAILY;FOO=1',
    'RRULE:FREQ=DAILY;COUNT=2;COUNT=3',
    'RRULE:FREQ=WEEKLY;COUNT=0',
    'RRULE:FREQ=DAILY;INTERVAL=-1',
    'RRULE:FREQ=WEEKLY;COUNT=2;UNTIL=20260101T000000Z',
    'RRULE:FREQ=DAILY;UNTIL=20250101T250000Z',
    'RRULE:FREQ=WEEKLY;BYDAY=XX',
    'RRULE:FREQ=WEEKLY;BYDAY=1MO',
    'RRULE:FREQ=MONTHLY;BYMONTHDAY=32',
    'RRULE:FREQ=MONTHLY;BYMONTHDAY=0',
    'RRULE:FREQ=WEEKLY;BYMONTHDAY=1',
    'RRULE:FREQ=DAILY;BYWEEKNO=1',
    'RRULE:FREQ=MONTHLY;BYYEARDAY=1',
    'RRULE:FREQ=WEEKLY;BYSETPOS=1',
    'RRULE:FREQ=DAILY;BYHOUR=9,17',
    'EXDATE:2025-01-01',
    'EXDATE:20250230T100000',
    'EXDATE;VALUE=DATE:20250401T100000',
    'EXDATE;TZID=Mars/Olympus_Mons:20250401T100000',
    'EXDATE;TZID=Europe/Berlin:20250401T080000Z',
    'EXDATE;FOO=bar:20250401T100000',
    'RDATE;VALUE=PERIOD:20250401T100000Z/PT1H',
    'RDATE:',
  ])('refuses %s naming the line', (line) => {
    expect(invalidEventMessage(series(start, [line]))).toContain(line);
  });

  it('refuses BYHOUR in an all-day series', () => {
    expect(invalidEventMessage(series('2025-03-20T00:00:00Z', ['RRULE:FREQ=DAILY;BYHOUR=9'], 'UTC', true))).toContain('BYHOUR');
  });

  it('refuses a bounded rule that ends before the start', () => {
    expect(invalidEventMessage(series(start, ['RRULE:FREQ=DAILY;UNTIL=20250319T000000Z']))).toMatch(/yields no occurrence/);
  });

  it('refuses a rule that can never match, without running to year 9999', () => {
    const begun = performance.now();
    for (const rule of [
      'RRULE:FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30',
      'RRULE:FREQ=WEEKLY;BYDAY=MO;BYSETPOS=2',
      'RRULE:FREQ=MONTHLY;BYMONTH=4;BYMONTHDAY=31',
      'RRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30;COUNT=2',
      'EXRULE:FREQ=DAILY;INTERVAL=7;BYDAY=TU',
    ]) {
      expect(invalidEventMessage(series(start, ['RRULE:FREQ=DAILY', rule]))).toMatch(/yields no occurrence/);
    }
    expect(performance.now() - begun).toBeLessThan(5_000); // unguarded, the first alone takes ~15 s
  });

  it('refuses a series whose every date is excluded', () => {
    const excluded = series(start, ['RRULE:FREQ=WEEKLY;COUNT=2', 'EXDATE:20250320T090000Z,20250327T090000Z']);
    expect(invalidEventMessage(excluded)).toMatch(/every date is excluded/);
  });

  it('refuses an RDATE before the start and an unknown zone', () => {
    expect(invalidEventMessage(series(start, ['RDATE:20250319T090000Z']))).toMatch(/before the start/);
    expect(invalidEventMessage(series(start, ['RRULE:FREQ=DAILY'], 'Europe/Atlantis'))).toMatch(/time zone/);
  });

  it.each([[['FREQ=WEEKLY;COUNT=2']], [['rrule:freq=weekly;count=2;']], [['RRULE:FREQ=DAILY;BYHOUR=11', 'EXDATE;TZID="Europe/Berlin":20250321T110000']], [[]]])(
    'accepts %j',
    (pattern) => {
      expect(() => validatePattern(series(start, pattern))).not.toThrow();
    },
  );
});

describe('occurrences options', () => {
  const weekly = series('2025-01-06T09:00:00Z', ['RRULE:FREQ=WEEKLY']); // Mondays 10:00–11:00 Berlin

  it('keeps an occurrence whose [start, end] touches [from, to], and no other', () => {
    const at = (iso: string) => new Date(iso);
    expect(starts(weekly, { from: at('2025-01-13T10:00:00Z'), to: at('2025-01-13T10:00:00Z') })).toEqual(['2025-01-13T09:00:00.000Z']);
    expect(starts(weekly, { from: at('2025-01-13T10:00:01Z'), to: at('2025-01-20T08:59:59Z') })).toEqual([]);
    expect(starts(weekly, { from: at('2025-01-13T10:00:01Z'), to: at('2025-01-20T09:00:00Z') })).toEqual(['2025-01-20T09:00:00.000Z']);
    expect(starts(weekly, { durationMs: 0, from: at('2025-01-13T09:00:01Z'), to: at('2025-01-20T09:00:00Z') })).toEqual(['2025-01-20T09:00:00.000Z']);
  });

  it('treats `after` as exclusive and stops at `limit`', () => {
    expect(starts(weekly, { after: new Date('2025-01-13T09:00:00Z'), limit: 2 })).toEqual(['2025-01-20T09:00:00.000Z', '2025-01-27T09:00:00.000Z']);
    expect(starts(weekly, { after: new Date('2025-01-13T08:59:59Z'), limit: 1 })).toEqual(['2025-01-13T09:00:00.000Z']);
    expect(starts(weekly, { limit: 0 })).toEqual([]);
    expect(starts(weekly, { limit: 100 })).toHaveLength(100);
  });

  it('pages through a daily series over 10 years exactly like one expansion', () => {
    const daily = series('2026-01-01T09:00:00Z', ['RRULE:FREQ=DAILY;UNTIL=20351231T235959Z']);
    const all = starts(daily, { limit: 5000 });
    expect(all).toHaveLength(3652);
    const paged: string[] = [];
    for (let page = starts(daily); page.length > 0; page = starts(daily, { after: new Date(paged[paged.length - 1]!) })) {
      paged.push(...page);
    }
    expect(paged).toEqual(all);
  });

  it.each([
    'RRULE:FREQ=DAILY;INTERVAL=5',
    'RRULE:FREQ=WEEKLY;INTERVAL=3;WKST=SU;BYDAY=SU,TU',
    'RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TH;BYMONTH=1,7',
    'RRULE:FREQ=MONTHLY;INTERVAL=5;BYDAY=-1FR',
    'RRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=1,-1',
    'RRULE:FREQ=YEARLY;INTERVAL=3;BYMONTH=2,8;BYMONTHDAY=-1',
  ])('starts deep pages of %s where a full expansion has them', (rule) => {
    const of = series('2025-07-31T07:00:00Z', [rule]); // a Thursday
    const all = starts(of, { limit: 300 });
    for (const index of [0, 7, 55, 150, 290]) {
      expect(starts(of, { after: new Date(all[index]!), limit: 4 })).toEqual(all.slice(index + 1, index + 5));
    }
  });
});

describe('lastOccurrenceStart', () => {
  it('is null for an unbounded series and for a COUNT above the cap', () => {
    expect(lastOccurrenceStart(series('2025-01-06T09:00:00Z', ['RRULE:FREQ=WEEKLY']))).toBeNull();
    expect(lastOccurrenceStart(series('2025-01-06T09:00:00Z', ['RRULE:FREQ=WEEKLY;COUNT=36526']))).toBeNull();
    expect(lastOccurrenceStart(series('2025-01-06T09:00:00Z', ['RRULE:FREQ=WEEKLY;COUNT=2', 'RRULE:FREQ=DAILY']))).toBeNull();
  });

  it('skips an excluded last date and honours RDATEs past the rule', () => {
    const excluded = series('2025-01-06T09:00:00Z', ['RRULE:FREQ=WEEKLY;COUNT=3', 'EXDATE:20250120T090000Z']);
    expect(lastOccurrenceStart(excluded)?.toISOString()).toBe('2025-01-13T09:00:00.000Z');
    const extended = series('2025-01-06T09:00:00Z', ['RRULE:FREQ=WEEKLY;COUNT=3', 'RDATE:20250301T120000Z']);
    expect(lastOccurrenceStart(extended)?.toISOString()).toBe('2025-03-01T12:00:00.000Z');
  });

  it('finds the last date of a far UNTIL, and of a single event', () => {
    const far = series('2025-01-06T09:00:00Z', ['RRULE:FREQ=MONTHLY;BYDAY=1MO;UNTIL=21000101T000000Z']);
    expect(lastOccurrenceStart(far)?.toISOString()).toBe('2099-12-07T09:00:00.000Z');
    expect(lastOccurrenceStart(series('2025-01-06T09:00:00Z', []))?.toISOString()).toBe('2025-01-06T09:00:00.000Z');
  });
});

describe('instance ids', () => {
  it('round-trips the UTC start', () => {
    const start = new Date('2024-01-01T10:00:00Z');
    expect(formatInstanceId(start)).toBe('20240101T100000Z');
    expect(parseInstanceId('20240101T100000Z')).toEqual(start);
    expect(parseInstanceId('20240101T110000+0100')).toEqual(start);
    expect(parseInstanceId('20240101T053000-0430')).toEqual(start);
  });

  it.each([
    '',
    '20240101T100000',
    '2024-01-01T10:00:00Z',
    '20240230T100000Z',
    '20240101T240000Z',
    '20240101T106000Z',
    '20241301T100000Z',
    '20240101T100000+2400',
    '20240101T100000+0160',
    'x20240101T100000Z',
    '20240101T100000Zx',
  ])('rejects %j', (id) => {
    expect(parseInstanceId(id)).toBeUndefined();
  });

  it('recognises original starts only', () => {
    const weekly = series('2025-01-06T09:00:00Z', ['RRULE:FREQ=WEEKLY;COUNT=3', 'EXDATE:20250113T090000Z']);
    expect(isOccurrence(weekly, new Date('2025-01-06T09:00:00Z'))).toBe(true);
    expect(isOccurrence(weekly, new Date('2025-01-13T09:00:00Z'))).toBe(false);
    expect(isOccurrence(weekly, new Date('2025-01-20T09:00:00Z'))).toBe(true);
    expect(isOccurrence(weekly, new Date('2025-01-27T09:00:00Z'))).toBe(false);
  });

  it('keeps its answers per series: asked again, or of a series that differs in start, zone or pattern, it answers for that series', () => {
    // 09:00 in Berlin is 08:00 UTC in winter; in UTC it is 09:00
    const berlin = series('2025-01-06T08:00:00Z', ['RRULE:FREQ=DAILY']);
    const utc = series('2025-01-06T08:00:00Z', ['RRULE:FREQ=DAILY'], 'UTC');
    const later = series('2025-01-06T09:00:00Z', ['RRULE:FREQ=DAILY']);
    const weekly = series('2025-01-06T08:00:00Z', ['RRULE:FREQ=WEEKLY']);
    const summer = new Date('2025-07-08T07:00:00Z'); // 09:00 in Berlin, 07:00 UTC
    for (let round = 0; round < 2; round++) {
      expect(isOccurrence(berlin, summer)).toBe(true);
      expect(isOccurrence(utc, summer)).toBe(false);
      expect(isOccurrence(later, summer)).toBe(false);
      expect(isOccurrence(weekly, summer)).toBe(false); // a Tuesday
      expect(isOccurrence(weekly, new Date('2025-07-07T07:00:00Z'))).toBe(true); // a Monday
    }
  });

  it('answers alike past the number of answers it keeps for one series', () => {
    const daily = series('2025-01-06T09:00:00Z', ['RRULE:FREQ=DAILY'], 'UTC');
    for (let round = 0; round < 2; round++) {
      for (let day = 0; day < 300; day++) {
        const start = Date.UTC(2025, 0, 6 + day, 9);
        expect(isOccurrence(daily, new Date(start))).toBe(true);
        expect(isOccurrence(daily, new Date(start + 60_000))).toBe(false);
      }
    }
  });
});
