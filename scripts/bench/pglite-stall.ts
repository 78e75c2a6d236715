// Whether a long query on the embedded database (PGlite, no DATABASE_URL) stops the server's other
// work (issue 21). One Convene instance as src/main.ts builds it, on PGlite in a temporary data
// directory; a prober asks it every PROBE_MS for an answer that needs no database (GET of an
// unknown path: the HTTP stack's 404) while the instance's own database runs, one after the other,
// `select pg_sleep(1)` (a query that waits) and a count over 3 million generated rows (one that
// computes). Printed per phase: the probes' answer times and the event loop's delay
// (perf_hooks.monitorEventLoopDelay), idle first for comparison. A database that runs in the
// server's thread holds both for the whole query; one in its own thread does not.
// Run: npx tsx scripts/bench/pglite-stall.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config/load.js';
import { createConvene } from '../../src/server.js';

const PROBE_MS = 20;
const dataDir = mkdtempSync(join(tmpdir(), 'convene-stall-'));
const { DATABASE_URL: _database, REDIS_URL: _redis, ...inherited } = process.env;
const config = loadConfig({
  file: false,
  env: {
    ...inherited,
    CONVENE_HTTP__HOST: '127.0.0.1',
    CONVENE_HTTP__PORT: '0',
    CONVENE_DATABASE__DATA_DIR: join(dataDir, 'convene'),
    CONVENE_DEV__IDENTITY_PROVIDER: 'true',
    CONVENE_LOGGING__LEVEL: 'warn',
  },
});

const convene = await createConvene(config);
try {
  const { port } = await convene.listen();
  const probeUrl = `http://127.0.0.1:${port}/v1/stall-probe`;
  const { db } = convene.database;

  /** Probes (one at a time, every PROBE_MS) and the loop's delay while `work` runs. */
  async function phase(label: string, work: () => Promise<unknown>): Promise<void> {
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    // its first sample only sets a starting time: a query blocking before it would go unseen
    await new Promise((resolve) => setTimeout(resolve, 30));
    const answers: number[] = [];
    let done = false;
    const prober = (async () => {
      while (!done) {
        const started = performance.now();
        await (await fetch(probeUrl)).arrayBuffer();
        answers.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, PROBE_MS));
      }
    })();
    const started = performance.now();
    await work();
    const took = performance.now() - started;
    done = true;
    await prober;
    // the loop's sampling timer, held up by a blocking query, fires once it is free: its sample counts
    await new Promise((resolve) => setTimeout(resolve, 50));
    loop.disable();
    answers.sort((a, b) => a - b);
    const ms = (value: number | undefined) => `${(value ?? NaN).toFixed(1).padStart(7)} ms`;
    console.log(
      `${label.padEnd(44)} ${ms(took)} | ${String(answers.length).padStart(3)} probes, p50 ${ms(answers[Math.floor(answers.length / 2)])}, max ${ms(answers.at(-1))}` +
        ` | event loop delay p99 ${ms(loop.percentile(99) / 1e6)}, max ${ms(loop.max / 1e6)}`,
    );
  }

  console.log(`Convene on PGlite in ${dataDir}; a probe every ${PROBE_MS} ms (GET /v1/stall-probe, 404, no query)\n`);
  console.log(`${'phase'.padEnd(44)} ${'took'.padStart(10)} | probes' answer times | the server's event loop`);
  await phase('idle, 1 s', () => new Promise((resolve) => setTimeout(resolve, 1000)));
  await phase('select pg_sleep(1)', () => sql`select pg_sleep(1)`.execute(db));
  await phase('select count(*) from generate_series(1, 3e6)', () => sql`select count(*) from generate_series(1, 3000000)`.execute(db));
  await phase('idle, 1 s', () => new Promise((resolve) => setTimeout(resolve, 1000)));
} finally {
  await convene.close();
  rmSync(dataDir, { recursive: true, force: true });
}
