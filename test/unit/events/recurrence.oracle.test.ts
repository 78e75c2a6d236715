import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isOccurrence, lastOccurrenceStart, occurrences } from '../../../src/domain/events/recurrence.js';
import { icalExpand } from '../../support/recurrence-oracle.js';
import { expandOurs, MAX_COMPARED, ORACLE_CASES, seriesOf } from './recurrence-cases.js';

const iso = (ms: number) => new Date(ms).toISOString();

describe('recurrence agrees with ical.js', () => {
  it('has at least 30 patterns', () => {
    expect(ORACLE_CASES.length).toBeGreaterThanOrEqual(30);
  });

  for (const testCase of ORACLE_CASES) {
    describe(testCase.name, () => {
      const oracle = icalExpand(testCase, MAX_COMPARED);
      const expected = oracle.starts.map(iso);
      const series = seriesOf(testCase, oracle.start);

      it('expands to the same starts', () => {
        expect(expected.length).toBeGreaterThan(2);
        expect(expandOurs(testCase, oracle.start)).toEqual(expected);
      });

      it('pages with `after` and windows with `from`/`to` like the full list', () => {
        const middle = Math.floor(expected.length / 2);
        const after = occurrences(series, { durationMs: 0, after: new Date(expected[middle]!), limit: 3 });
        expect(after.map((date) => date.toISOString())).toEqual(expected.slice(middle + 1, middle + 4));
        const window = occurrences(series, {
          durationMs: 0,
          from: new Date(expected[1]!),
          to: new Date(expected[middle]!),
          limit: MAX_COMPARED,
        });
        expect(window.map((date) => date.toISOString())).toEqual(expected.slice(1, middle + 1));
      });

      it('knows its own starts and nothing a second off', () => {
        const start = new Date(expected[expected.length - 1]!);
        expect(isOccurrence(series, start)).toBe(true);
        expect(isOccurrence(series, new Date(start.getTime() + 1000))).toBe(false);
      });

      it('reports the last start of a bounded series', () => {
        const bounded = testCase.lines.some((line) => /COUNT=|UNTIL=/.test(line));
        const last = lastOccurrenceStart(series);
        if (!bounded) expect(last).toBeNull();
        else if (expected.length < MAX_COMPARED) expect(last?.toISOString()).toBe(expected[expected.length - 1]);
      });
    });
  }

  it('gives the same results when the process runs in America/Los_Angeles', () => {
    const script = fileURLToPath(new URL('./print-expansions.ts', import.meta.url));
    const child = spawnSync(process.execPath, ['--import', 'tsx', script], {
      env: { ...process.env, TZ: 'America/Los_Angeles' },
      encoding: 'utf8',
    });
    expect(child.stderr).toBe('');
    const printed = JSON.parse(child.stdout) as { offsetMinutes: number; expansions: string[][] };
    expect(printed.offsetMinutes).toBe(480); // the child really ran 8 h behind UTC
    expect(new Date(2025, 0, 1).getTimezoneOffset()).toBe(0); // and this process in UTC
    const here = ORACLE_CASES.map((testCase) => expandOurs(testCase, icalExpand(testCase, 1).start));
    expect(printed.expansions).toEqual(here);
  }, 60_000);
});
