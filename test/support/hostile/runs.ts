/**
 * How long the hostile-input properties run. Each file names its long run, which the slow tier
 * (`npm run test:slow`, in CI) makes, within about a minute on the CI machine; `npm test` makes a
 * quarter of it, so that the suite stays quick enough to run before each commit. `FC_RUNS=<n>` sets
 * the runs per property for a longer run, and a failure prints
 * fast-check's seed and path, which `FC_SEED=<seed> FC_PATH=<path>` replay. A failure is reported
 * as found (it is rarely bigger than one mutation); `FC_SHRINK=1` shrinks it first.
 */
import type fc from 'fast-check';

export function propertyRuns(longRuns: number): { runs: number; parameters: fc.Parameters<unknown> } {
  const tierRuns = process.env.CONVENE_TEST_TIER === 'slow' ? longRuns : Math.ceil(longRuns / 4);
  const runs = Number(process.env.FC_RUNS ?? tierRuns);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`FC_RUNS must be a positive integer, not ${process.env.FC_RUNS}`);
  const seed = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
  return {
    runs,
    parameters: {
      numRuns: runs,
      ...(seed === undefined ? {} : { seed, path: process.env.FC_PATH }),
      endOnFailure: process.env.FC_SHRINK === undefined,
    },
  };
}
