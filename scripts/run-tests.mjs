// `npm test`: the suite a developer runs before each commit; `npm run test:slow` (`--slow`): the slow
// tiers, which CI runs as well: the soak, the fault injection (servers stopped, frozen and killed),
// the `convene` command as real processes (each run starts Node and opens the database: 4 minutes),
// the media calls (Janus and headless Chromium with fake cameras) and the long hostile-input runs. Both end with the line CI reads, `N passed, N failed`.
// Extra arguments go to vitest (`npm test -- test/unit`); naming files runs them whatever their tier.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';

/** The slow tiers' folders: left out of `npm test` unless named, the whole of `npm run test:slow`. */
const SLOW_FOLDERS = ['test/soak', 'test/faults', 'test/integration/cli', 'test/media'];
/** The hostile-input properties run in both tiers: briefly in `npm test`, at length in the slow one. */
const PROPERTY_FOLDER = 'test/property';

const slow = process.argv.includes('--slow');
const vitestArgs = process.argv.slice(2).filter((arg) => arg !== '--slow');
const namesFiles = vitestArgs.some((arg) => !arg.startsWith('-'));
const selection = slow ? [...SLOW_FOLDERS, PROPERTY_FOLDER] : namesFiles ? [] : SLOW_FOLDERS.flatMap((folder) => ['--exclude', `${folder}/**`]);
const report = 'vitest.json';
rmSync(report, { force: true });
const run = spawnSync(
  'vitest',
  ['run', '--config', 'test/vitest.config.ts', '--reporter=default', '--reporter=json', `--outputFile=${report}`, ...selection, ...vitestArgs],
  { stdio: 'inherit', shell: false, env: { ...process.env, TZ: process.env.TZ ?? 'UTC', CONVENE_TEST_TIER: slow ? 'slow' : 'quick' } },
);
if (run.error) console.error(run.error.message);

let passed = 0;
let failed;
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
