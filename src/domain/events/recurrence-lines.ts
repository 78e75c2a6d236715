/**
 * Parsing of the RFC 5545 lines of a recurrence pattern (RRULE, EXRULE, RDATE, EXDATE) into plain
 * values. Nothing here knows about zones or rrule: dates stay as written, so the expansion can
 * interpret them against the series they belong to. Every refusal names the offending line.
 */
import { errors } from '../../errors.js';
import { isKnownTimeZone } from '../time/zones.js';

export type Frequency = 'YEARLY' | 'MONTHLY' | 'WEEKLY' | 'DAILY';

/** A DATE or DATE-TIME value as written: `utc` for a trailing Z, `tzid` from the TZID parameter. */
export interface DateValue {
  year: number;
  month: number;
  day: number;
  time?: { hour: number; minute: number; second: number };
  utc: boolean;
  tzid?: string;
}

/** Weekdays are numbered as rrule numbers them: Monday 0 … Sunday 6. */
export interface ByDay {
  weekday: number;
  ordinal?: number;
}

export interface RuleSpec {
  /** The line as written, for messages. */
  source: string;
  freq: Frequency;
  interval: number;
  count?: number;
  until?: DateValue;
  wkst?: number;
  bysetpos?: number[];
  bymonth?: number[];
  bymonthday?: number[];
  byyearday?: number[];
  byweekno?: number[];
  byday?: ByDay[];
  byhour?: number[];
  byminute?: number[];
  bysecond?: number[];
}

type NumberListField = 'bysetpos' | 'bymonth' | 'bymonthday' | 'byyearday' | 'byweekno' | 'byhour' | 'byminute' | 'bysecond';

export interface ParsedPattern {
  rrules: RuleSpec[];
  exrules: RuleSpec[];
  rdates: DateValue[];
  exdates: DateValue[];
}

const WEEKDAYS = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'];
/** The numeric BYxxx parts: their field, range and whether they may count from the end (negative). */
const NUMBER_LISTS: Record<string, { field: NumberListField; min: number; max: number; signed: boolean }> = {
  BYSETPOS: { field: 'bysetpos', min: 1, max: 366, signed: true },
  BYMONTH: { field: 'bymonth', min: 1, max: 12, signed: false },
  BYMONTHDAY: { field: 'bymonthday', min: 1, max: 31, signed: true },
  BYYEARDAY: { field: 'byyearday', min: 1, max: 366, signed: true },
  BYWEEKNO: { field: 'byweekno', min: 1, max: 53, signed: true },
  BYHOUR: { field: 'byhour', min: 0, max: 23, signed: false },
  BYMINUTE: { field: 'byminute', min: 0, max: 59, signed: false },
  BYSECOND: { field: 'bysecond', min: 0, max: 59, signed: false },
};
const FINER_THAN_DAILY = new Set(['HOURLY', 'MINUTELY', 'SECONDLY']);

class LineError extends Error {}

function fail(message: string): never {
  throw new LineError(message);
}

export function parsePattern(lines: readonly string[], isAllDay: boolean): ParsedPattern {
  const pattern: ParsedPattern = { rrules: [], exrules: [], rdates: [], exdates: [] };
  for (const line of lines) {
    try {
      parseLine(line, isAllDay, pattern);
    } catch (error) {
      if (!(error instanceof LineError)) throw error;
      throw errors.invalidEvent(`Invalid recurrence line "${line}": ${error.message}`);
    }
  }
  return pattern;
}

function parseLine(line: string, isAllDay: boolean, into: ParsedPattern): void {
  const trimmed = line.trim();
  // A bare rule ("FREQ=…") is an RRULE without its name
  const { name, params, value } = /^FREQ=/i.test(trimmed) ? { name: 'RRULE', params: new Map<string, string>(), value: trimmed } : splitContentLine(trimmed);
  switch (name) {
    case 'RRULE':
    case 'EXRULE':
      if (params.size > 0) fail(`${name} takes no parameters`);
      (name === 'RRULE' ? into.rrules : into.exrules).push(parseRule(line, value, isAllDay));
      return;
    case 'RDATE':
    case 'EXDATE':
      (name === 'RDATE' ? into.rdates : into.exdates).push(...parseDateList(name, params, value));
      return;
    default:
      fail(`unknown property ${name || '(none)'}; expected RRULE, EXRULE, RDATE or EXDATE`);
  }
}

/** `NAME;PARAM=VALUE;…:VALUE`; parameter values may be quoted (and then contain ':' or ';'). */
function splitContentLine(line: string) {
  const nameMatch = /^[A-Za-z-]+/.exec(line);
  if (!nameMatch) fail('expected a property name');
  const name = nameMatch[0].toUpperCase();
  const params = new Map<string, string>();
  let rest = line.slice(name.length);
  while (rest.startsWith(';')) {
    const param = /^;([A-Za-z-]+)=("[^"]*"|[^";:,]*)/.exec(rest);
    if (!param) fail('malformed parameter');
    const key = param[1]!.toUpperCase();
    if (params.has(key)) fail(`parameter ${key} given twice`);
    params.set(key, param[2]!.replace(/^"(.*)"$/, '$1'));
    rest = rest.slice(param[0].length);
  }
  if (!rest.startsWith(':')) fail('expected ":" after the property name and parameters');
  return { name, params, value: rest.slice(1) };
}

function parseDateList(name: string, params: Map<string, string>, value: string): DateValue[] {
  const valueType = (params.get('VALUE') ?? 'DATE-TIME').toUpperCase();
  if (valueType === 'PERIOD') fail('VALUE=PERIOD is not supported');
  if (valueType !== 'DATE' && valueType !== 'DATE-TIME') fail(`unknown VALUE=${valueType}`);
  for (const key of params.keys()) if (key !== 'VALUE' && key !== 'TZID') fail(`unknown parameter ${key}`);
  const tzid = params.get('TZID');
  if (tzid !== undefined && !isKnownTimeZone(tzid)) fail(`unknown time zone ${tzid}`);
  if (value === '') fail(`${name} needs at least one date`);
  return value.split(',').map((text) => {
    const date = parseDateValue(text);
    if ((valueType === 'DATE') !== (date.time === undefined)) fail(`"${text}" is not a ${valueType}`);
    if (date.utc && tzid !== undefined) fail(`"${text}" is in UTC but carries a TZID`);
    return { ...date, tzid };
  });
}

function parseDateValue(text: string): DateValue {
  const match = /^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})(Z?))?$/.exec(text);
  if (!match) fail(`"${text}" is not a date (YYYYMMDD) or date-time (YYYYMMDDTHHMMSS[Z])`);
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const daysInMonth = new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !isLeap(year) ? 1 : 0);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth) fail(`"${text}" is not a calendar date`);
  if (match[4] === undefined) return { year, month, day, utc: false };
  const time = { hour: Number(match[4]), minute: Number(match[5]), second: Number(match[6]) };
  if (time.hour > 23 || time.minute > 59 || time.second > 59) fail(`"${text}" is not a time of day`);
  return { year, month, day, time, utc: match[7] === 'Z' };
}

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function parseRule(source: string, value: string, isAllDay: boolean): RuleSpec {
  const parts = new Map<string, string>();
  for (const part of value.split(';')) {
    if (part === '') continue; // tolerate a trailing ';', as many generators emit one
    const eq = part.indexOf('=');
    if (eq <= 0) fail(`"${part}" is not KEY=VALUE`);
    const key = part.slice(0, eq).toUpperCase();
    if (parts.has(key)) fail(`${key} given twice`);
    parts.set(key, part.slice(eq + 1));
  }
  const freq = (parts.get('FREQ') ?? fail('FREQ is missing')).toUpperCase();
  if (FINER_THAN_DAILY.has(freq)) fail(`FREQ=${freq} recurs more often than daily`);
  if (!['YEARLY', 'MONTHLY', 'WEEKLY', 'DAILY'].includes(freq)) fail(`unknown FREQ=${freq}`);
  const rule: RuleSpec = { source, freq: freq as Frequency, interval: 1 };
  for (const [key, text] of parts) {
    switch (key) {
      case 'FREQ':
        break;
      case 'INTERVAL':
        rule.interval = positiveInteger(key, text);
        break;
      case 'COUNT':
        rule.count = positiveInteger(key, text);
        break;
      case 'UNTIL':
        rule.until = parseDateValue(text);
        break;
      case 'WKST':
        rule.wkst = weekday(text);
        break;
      case 'BYDAY':
        rule.byday = text.split(',').map(byDay);
        break;
      default: {
        const list = NUMBER_LISTS[key] ?? fail(`unknown rule part ${key}`);
        rule[list.field] = numberList(key, text, list.min, list.max, list.signed);
      }
    }
  }
  checkCombinations(rule, isAllDay);
  return rule;
}

/** The "MUST NOT"s of RFC 5545 §3.3.10, plus this service's own limits (daily or coarser). */
function checkCombinations(rule: RuleSpec, isAllDay: boolean): void {
  if (rule.count !== undefined && rule.until !== undefined) fail('COUNT and UNTIL must not both be given');
  for (const [key, list] of [
    ['BYHOUR', rule.byhour],
    ['BYMINUTE', rule.byminute],
    ['BYSECOND', rule.bysecond],
  ] as const) {
    if (!list) continue;
    if (isAllDay) fail(`${key} cannot be used in an all-day event`);
    if (list.length > 1) fail(`${key} with several values recurs more often than daily`);
  }
  if (rule.bymonthday && rule.freq === 'WEEKLY') fail('BYMONTHDAY must not be used with FREQ=WEEKLY');
  if (rule.byyearday && ['DAILY', 'WEEKLY', 'MONTHLY'].includes(rule.freq)) {
    fail(`BYYEARDAY must not be used with FREQ=${rule.freq}`);
  }
  if (rule.byweekno && rule.freq !== 'YEARLY') fail('BYWEEKNO is only allowed with FREQ=YEARLY');
  if (rule.byday?.some((day) => day.ordinal !== undefined)) {
    if (rule.freq !== 'MONTHLY' && rule.freq !== 'YEARLY') fail(`numbered BYDAY needs FREQ=MONTHLY or YEARLY`);
    if (rule.byweekno) fail('numbered BYDAY must not be used with BYWEEKNO');
  }
  const hasOtherBy = [rule.bymonth, rule.bymonthday, rule.byyearday, rule.byweekno, rule.byday, rule.byhour, rule.byminute, rule.bysecond].some(
    (list) => list !== undefined,
  );
  if (rule.bysetpos && !hasOtherBy) fail('BYSETPOS needs another BYxxx rule part');
}

function positiveInteger(key: string, text: string): number {
  if (!/^\d{1,9}$/.test(text) || Number(text) < 1) fail(`${key} must be a positive integer`);
  return Number(text);
}

function numberList(key: string, text: string, min: number, max: number, signed: boolean): number[] {
  return text.split(',').map((item) => {
    const match = (signed ? /^[+-]?\d{1,3}$/ : /^\+?\d{1,3}$/).exec(item);
    const value = Number(item);
    if (!match || Math.abs(value) < min || Math.abs(value) > max || (!signed && value < 0)) {
      fail(`${key} value "${item}" is out of range`);
    }
    return value;
  });
}

function weekday(text: string): number {
  const index = WEEKDAYS.indexOf(text.toUpperCase());
  if (index < 0) fail(`"${text}" is not a weekday (MO…SU)`);
  return index;
}

function byDay(text: string): ByDay {
  const match = /^([+-]?\d{1,2})?([A-Za-z]{2})$/.exec(text);
  if (!match) fail(`BYDAY value "${text}" is malformed`);
  const day: ByDay = { weekday: weekday(match[2]!) };
  if (match[1] !== undefined) {
    const ordinal = Number(match[1]);
    if (ordinal === 0 || Math.abs(ordinal) > 53) fail(`BYDAY value "${text}" has an ordinal out of range`);
    day.ordinal = ordinal;
  }
  return day;
}
