// `npm test`: runs the vitest suite and ends with the line CI reads, `N passed, N failed`.
// Extra arguments go to vitest (`npm test -- test/unit`).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';

const report = 'vitest.json';
rmSync(report, { force: true });
const run = spawnSync(
  'vitest',
  ['run', '--config', 'test/vitest.config.ts', '--reporter=default', '--reporter=json', `--outputFile=${report}`, ...process.argv.slice(2)],
  { stdio: 'inherit', shell: false, env: { ...process.env, TZ: process.env.TZ ?? 'UTC' } },
);
if (run.error) console.error(run.error.message);

let passed = 0;
let failed = 0;
let skipped = 0;
if (existsSync(report)) {
  const r = JSON.parse(readFileSync(report, 'utf8'));
  passed = r.numPassedTests;
  failed = r.numFailedTests;
  skipped = r.numPendingTests + r.numTodoTests;
  // a file that failed to load has no failed test but must fail the run
  if (run.status !== 0 && failed === 0) failed = Math.max(1, r.numFailedTestSuites ?? 1);
} else {
  failed = 1;
}
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(run.status === 0 && failed === 0 ? 0 : 1);
