/**
 * Patterns checked against ical.js (recurrence.oracle.test.ts), also expanded in a child process
 * under another TZ. Each expands to at most MAX_COMPARED starts. Cases where ical.js departs from
 * RFC 5545 (DTSTART not on the rule, RDATE without RRULE, Feb 29 yearly, BYWEEKNO, DST gap and overlap) are
 * tested by hand in recurrence.test.ts instead.
 */
import { occurrences, type Series } from '../../../src/domain/events/recurrence.js';
import type { OracleInput } from '../../support/recurrence-oracle.js';

export const MAX_COMPARED = 60;

export interface OracleCase extends OracleInput {
  name: string;
}

const BERLIN = 'Europe/Berlin';
const NEW_YORK = 'America/New_York';
const SYDNEY = 'Australia/Sydney';

export const ORACLE_CASES: OracleCase[] = [
  // Europe/Berlin: DST starts 2025-03-30, ends 2025-10-26
  { name: 'Berlin weekly COUNT across spring DST', zone: BERLIN, dtstart: '20250313T100000', lines: ['RRULE:FREQ=WEEKLY;COUNT=10'] },
  { name: 'Berlin weekly BYDAY across autumn DST', zone: BERLIN, dtstart: '20251013T100000', lines: ['RRULE:FREQ=WEEKLY;BYDAY=MO,WE,FR;COUNT=20'] },
  {
    name: 'Berlin biweekly BYDAY with UTC UNTIL',
    zone: BERLIN,
    dtstart: '20250902T080000',
    lines: ['RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH;UNTIL=20251231T230000Z'],
  },
  { name: 'Berlin daily 23:30 with UTC UNTIL across DST', zone: BERLIN, dtstart: '20251020T233000', lines: ['RRULE:FREQ=DAILY;UNTIL=20251030T223000Z'] },
  {
    name: 'Berlin monthly last weekday (BYSETPOS=-1)',
    zone: BERLIN,
    dtstart: '20250131T160000',
    lines: ['RRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;COUNT=12'],
  },
  { name: 'Berlin monthly last day (BYMONTHDAY=-1)', zone: BERLIN, dtstart: '20250131T090000', lines: ['RRULE:FREQ=MONTHLY;BYMONTHDAY=-1;COUNT=14'] },
  { name: 'Berlin monthly BYMONTHDAY=-3,15', zone: BERLIN, dtstart: '20250115T120000', lines: ['RRULE:FREQ=MONTHLY;BYMONTHDAY=-3,15;COUNT=10'] },
  { name: 'Berlin yearly last Sunday of March', zone: BERLIN, dtstart: '20250330T100000', lines: ['RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU;COUNT=5'] },
  { name: 'Berlin plain yearly', zone: BERLIN, dtstart: '20250704T180000', lines: ['RRULE:FREQ=YEARLY;COUNT=6'] },
  {
    name: 'Berlin weekly with EXDATE;TZID',
    zone: BERLIN,
    dtstart: '20250318T100000',
    lines: ['RRULE:FREQ=WEEKLY;COUNT=8', 'EXDATE;TZID=Europe/Berlin:20250401T100000,20250415T100000'],
  },
  {
    name: 'Berlin weekly with RDATE;TZID',
    zone: BERLIN,
    dtstart: '20250318T100000',
    lines: ['RRULE:FREQ=WEEKLY;COUNT=5', 'RDATE;TZID=Europe/Berlin:20250328T140000,20250402T090000'],
  },
  { name: 'Berlin every third day', zone: BERLIN, dtstart: '20250301T070000', lines: ['RRULE:FREQ=DAILY;INTERVAL=3;COUNT=20'] },
  { name: 'Berlin second Tuesday with UTC UNTIL', zone: BERLIN, dtstart: '20250114T190000', lines: ['RRULE:FREQ=MONTHLY;BYDAY=2TU;UNTIL=20260101T000000Z'] },
  { name: 'Berlin every other month on the 31st', zone: BERLIN, dtstart: '20250131T100000', lines: ['RRULE:FREQ=MONTHLY;INTERVAL=2;BYMONTHDAY=31;COUNT=6'] },
  { name: 'Berlin unbounded weekdays', zone: BERLIN, dtstart: '20250303T091500', lines: ['RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR'] },
  { name: 'Berlin EXDATE in UTC', zone: BERLIN, dtstart: '20251006T100000', lines: ['RRULE:FREQ=WEEKLY;COUNT=6', 'EXDATE:20251027T090000Z'] },
  // All-day (dates, no zone shifts)
  { name: 'all-day weekly Saturdays', zone: BERLIN, dtstart: '20250301', lines: ['RRULE:FREQ=WEEKLY;BYDAY=SA;COUNT=10'] },
  {
    name: 'all-day daily with DATE UNTIL and EXDATE',
    zone: BERLIN,
    dtstart: '20250325',
    lines: ['RRULE:FREQ=DAILY;UNTIL=20250410', 'EXDATE;VALUE=DATE:20250330,20250402'],
  },
  {
    name: 'all-day monthly last day with RDATE',
    zone: NEW_YORK,
    dtstart: '20250131',
    lines: ['RRULE:FREQ=MONTHLY;BYMONTHDAY=-1;COUNT=6', 'RDATE;VALUE=DATE:20250314'],
  },
  { name: 'all-day yearly', zone: SYDNEY, dtstart: '20251225', lines: ['RRULE:FREQ=YEARLY;COUNT=4'] },
  // America/New_York: DST starts 2025-03-09, ends 2025-11-02
  {
    name: 'New York monthly last weekday across November',
    zone: NEW_YORK,
    dtstart: '20250829T170000',
    lines: ['RRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;COUNT=6'],
  },
  { name: 'New York daily 18:00 across March DST', zone: NEW_YORK, dtstart: '20250303T180000', lines: ['RRULE:FREQ=DAILY;COUNT=14'] },
  { name: 'New York first Sunday monthly', zone: NEW_YORK, dtstart: '20250105T120000', lines: ['RRULE:FREQ=MONTHLY;BYDAY=1SU;COUNT=12'] },
  { name: 'New York Thanksgiving', zone: NEW_YORK, dtstart: '20251127T150000', lines: ['RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=4TH;COUNT=5'] },
  { name: 'New York biweekly WKST=SU', zone: NEW_YORK, dtstart: '20250907T090000', lines: ['RRULE:FREQ=WEEKLY;WKST=SU;INTERVAL=2;BYDAY=SU,MO;COUNT=10'] },
  {
    name: 'New York weekly with EXDATE and RDATE',
    zone: NEW_YORK,
    dtstart: '20251021T110000',
    lines: ['RRULE:FREQ=WEEKLY;COUNT=6', 'EXDATE;TZID=America/New_York:20251104T110000', 'RDATE;TZID=America/New_York:20251105T160000'],
  },
  {
    name: 'New York second-to-last weekday (BYSETPOS=-2)',
    zone: NEW_YORK,
    dtstart: '20250130T100000',
    lines: ['RRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-2;COUNT=10'],
  },
  {
    name: 'New York weekdays until a UTC UNTIL that is a start',
    zone: NEW_YORK,
    dtstart: '20251027T083000',
    lines: ['RRULE:FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR;UNTIL=20251110T133000Z'],
  },
  // Australia/Sydney: DST ends 2025-04-06, starts 2025-10-05
  { name: 'Sydney weekly across April DST end', zone: SYDNEY, dtstart: '20250317T100000', lines: ['RRULE:FREQ=WEEKLY;COUNT=10'] },
  { name: 'Sydney daily across October DST start', zone: SYDNEY, dtstart: '20250929T080000', lines: ['RRULE:FREQ=DAILY;COUNT=12'] },
  { name: 'Sydney first and last of the month', zone: SYDNEY, dtstart: '20250101T090000', lines: ['RRULE:FREQ=MONTHLY;BYMONTHDAY=1,-1;COUNT=12'] },
  { name: 'Sydney first and last day of the year', zone: SYDNEY, dtstart: '20250101T100000', lines: ['RRULE:FREQ=YEARLY;BYYEARDAY=1,-1;COUNT=6'] },
  { name: 'Sydney second and last Friday', zone: SYDNEY, dtstart: '20250110T090000', lines: ['RRULE:FREQ=MONTHLY;BYDAY=2FR,-1FR;COUNT=10'] },
  { name: 'Sydney quarterly third Wednesday', zone: SYDNEY, dtstart: '20250115T140000', lines: ['RRULE:FREQ=MONTHLY;INTERVAL=3;BYDAY=3WE;COUNT=8'] },
  { name: 'Sydney unbounded Saturdays and Tuesdays at midnight', zone: SYDNEY, dtstart: '20250301T000000', lines: ['RRULE:FREQ=WEEKLY;BYDAY=SA,TU'] },
  // UTC, and a zone without DST
  { name: 'UTC weekly', zone: 'UTC', dtstart: '20250310T120000', lines: ['RRULE:FREQ=WEEKLY;BYDAY=MO,TH;COUNT=9'] },
];

/** The Series of a case, with the start instant taken from the oracle. */
export function seriesOf(testCase: OracleCase, start: number): Series {
  return { start: new Date(start), timezone: testCase.zone, isAllDay: !testCase.dtstart.includes('T'), pattern: testCase.lines };
}

export function expandOurs(testCase: OracleCase, start: number): string[] {
  return occurrences(seriesOf(testCase, start), { durationMs: 0, limit: MAX_COMPARED }).map((date) => date.toISOString());
}
