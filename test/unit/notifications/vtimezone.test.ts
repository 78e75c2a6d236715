/**
 * The generated VTIMEZONEs, read back by an independent implementation (ical.js): for instants
 * across three years, including the minutes around every transition, the wall-clock time the
 * runtime's tz database shows must mean the same instant to ical.js.
 */
import ICAL from 'ical.js';
import { describe, expect, it } from 'vitest';
import { joinLines } from '../../../src/domain/notifications/ics-format.js';
import { transitionsInYear, vtimezone } from '../../../src/domain/notifications/vtimezone.js';
import { localTimeAt, type LocalTime } from '../../../src/domain/time/zones.js';

function icalZone(zone: string, year: number) {
  const text = joinLines(['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//test//EN', ...vtimezone(zone, year), 'END:VCALENDAR']);
  const component = new ICAL.Component(ICAL.parse(text));
  return { tz: new ICAL.Timezone(component.getFirstSubcomponent('vtimezone')!), vtimezone: component.getFirstSubcomponent('vtimezone')! };
}

function samples(zone: string, from: number, to: number): Date[] {
  const out: Date[] = [];
  for (let t = Date.UTC(from, 0, 1, 7); t < Date.UTC(to + 1, 0, 1); t += 5 * 86_400_000 + 3_600_000) out.push(new Date(t));
  for (let y = from; y <= to; y++) {
    // ±1 minute, not the transition's own instant: ical.js puts that one on the old offset
    for (const { at } of transitionsInYear(zone, y)) for (const d of [-61, -1, 1, 60]) out.push(new Date(at.getTime() + d * 60_000));
  }
  return out;
}

/**
 * The instant ical.js gives a wall-clock time in the zone: the direction calendar programs use to
 * read `DTSTART;TZID=…`. (ical.js's own UTC → zone conversion looks the offset up by the UTC
 * wall-clock, so it is off for a few hours after each transition; it is not used here.)
 */
function instantByIcal(tz: InstanceType<typeof ICAL.Timezone>, local: LocalTime): number {
  const t = new ICAL.Time({ ...local, isDate: false }, tz);
  return t.toUnixTime() * 1000;
}

/** A wall-clock time that happens twice (the repeated hour when clocks go back) names no single instant. */
function isRepeated(zone: string, instant: Date): boolean {
  const wall = JSON.stringify(localTimeAt(zone, instant));
  return [-3600, -1800, 1800, 3600].some((d) => JSON.stringify(localTimeAt(zone, new Date(instant.getTime() + d * 1000))) === wall);
}

describe('vtimezone', () => {
  it.each([
    ['Europe/Berlin', 2026],
    ['America/New_York', 2026],
    ['Australia/Sydney', 2026],
    ['Europe/London', 2027],
    ['Pacific/Chatham', 2026],
    ['America/Santiago', 2026],
    ['Asia/Tokyo', 2026],
    ['Asia/Kolkata', 2026],
    ['America/Sao_Paulo', 2026],
    ['Asia/Tehran', 2026],
    ['Africa/Casablanca', 2026],
  ])('%s (rules of %i) agrees with the tz database for three years', (zone, year) => {
    const { tz } = icalZone(zone, year);
    const checked = samples(zone, year, year + 2).filter((instant) => !isRepeated(zone, instant));
    expect(checked.length).toBeGreaterThan(200);
    for (const instant of checked) {
      const local = localTimeAt(zone, instant);
      expect(new Date(instantByIcal(tz, local)).toISOString(), `${zone} ${JSON.stringify(local)}`).toBe(instant.toISOString());
    }
  });

  it('describes a daylight-saving zone the way Outlook reads it: one STANDARD and one DAYLIGHT with a yearly rule', () => {
    const { vtimezone: component } = icalZone('Europe/Berlin', 2026);
    const daylight = component.getAllSubcomponents('daylight');
    const standard = component.getAllSubcomponents('standard');
    expect(daylight).toHaveLength(1);
    expect(standard).toHaveLength(1);
    expect(String(daylight[0]!.getFirstProperty('rrule')!.toICALString())).toBe('RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU');
    expect(String(standard[0]!.getFirstProperty('rrule')!.toICALString())).toBe('RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU');
    expect(daylight[0]!.getFirstPropertyValue('tzoffsetfrom')!.toString()).toBe('+01:00');
    expect(daylight[0]!.getFirstPropertyValue('tzoffsetto')!.toString()).toBe('+02:00');
    expect(daylight[0]!.getFirstPropertyValue('dtstart')!.toString()).toBe('1970-03-29T02:00:00');
    expect(standard[0]!.getFirstPropertyValue('dtstart')!.toString()).toBe('1970-10-25T03:00:00');
  });

  it('uses the second Sunday of March and the first of November for New York', () => {
    const lines = vtimezone('America/New_York', 2026);
    expect(lines).toContain('RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU');
    expect(lines).toContain('RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU');
  });

  it('gives a zone without daylight saving time a single STANDARD', () => {
    const lines = vtimezone('Asia/Kolkata', 2026);
    expect(lines.filter((l) => l.startsWith('BEGIN:'))).toEqual(['BEGIN:VTIMEZONE', 'BEGIN:STANDARD']);
    expect(lines).toContain('TZOFFSETTO:+0530');
  });

  it('lists the real transitions of a zone without a yearly rule, one RDATE each (ical.js reads only the first value of an RDATE)', () => {
    const lines = vtimezone('Africa/Casablanca', 2026);
    expect(lines.some((l) => l.startsWith('RRULE:'))).toBe(false);
    const rdates = lines.filter((l) => l.startsWith('RDATE:'));
    let transitions = 0;
    for (let y = 2026; y < 2046; y++) transitions += transitionsInYear('Africa/Casablanca', y).length;
    expect(transitions).toBeGreaterThanOrEqual(2);
    expect(rdates).toHaveLength(transitions);
    expect(rdates.every((l) => /^RDATE:\d{8}T\d{6}$/.test(l))).toBe(true);
  });
});
