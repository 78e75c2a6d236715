/**
 * Prints every oracle case as recurrence.ts expands it, as JSON. Run in a child process under a
 * different TZ to show the expansion does not depend on the process's zone.
 */
import { icalExpand } from '../../support/recurrence-oracle.js';
import { expandOurs, ORACLE_CASES } from './recurrence-cases.js';

const expansions = ORACLE_CASES.map((testCase) => expandOurs(testCase, icalExpand(testCase, 1).start));
process.stdout.write(JSON.stringify({ offsetMinutes: new Date(2025, 0, 1).getTimezoneOffset(), expansions }));
