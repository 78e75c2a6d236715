// `npm run bench`: runs every benchmark and prints one table of their results (issue 7).
//
// The protocol between this runner and the benchmarks (benchmarks are written to it; keep it):
// - A benchmark is a file `scripts/bench/*.bench.ts`. Each runs in a child process of its own
//   (`node --import tsx <file>`), one after the other in file-name order, with this process's
//   environment: DATABASE_URL and REDIS_URL select the real servers, without them a benchmark uses
//   the embedded defaults (PGlite, the in-process store and bus). `BENCH_ONLY=<substring>` runs
//   only the files whose name contains it.
// - A benchmark bounds its own time (autocannon's `duration`, a fixed number of runs); the whole run
//   should take under about 10 minutes. A benchmark still running after BENCH_LIMIT_MS (15 min) is
//   stopped, with its children (it leads a process group of its own), and counts as failed.
// - It prints any text it likes (passed through as it comes) and one line per result row:
//   `BENCH_ROW {"group","operation","rps","p50_ms","p99_ms","baseline","ratio","target","met","note"}`
//   (JSON after the prefix; the shape and a writer are in bench-row.ts). Those lines are collected.
// - At the end: one aligned table per group (operation, req/s, p50, p99, ratio to its baseline,
//   target, met), the rows' notes, the environment line (Node version, CPUs, embedded or
//   PostgreSQL/Redis, date) and the load average before and after (other work on the machine).
//   The exit code is 1 when a benchmark failed (exit code ≠ 0, or no row); a missed target is a
//   result shown in the table, not a failure.
// Run: npm run bench   (DATABASE_URL=postgres://… REDIS_URL=redis://… npm run bench; BENCH_ONLY=http npm run bench)
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseRow, type BenchRow } from './bench-row.js';

const BENCH_LIMIT_MS = 15 * 60_000;
const dir = fileURLToPath(new URL('.', import.meta.url));
const only = process.env.BENCH_ONLY ?? '';
const scripts = readdirSync(dir)
  .filter((name) => name.endsWith('.bench.ts') && name.includes(only))
  .sort();
if (scripts.length === 0) {
  console.error(`no benchmark matches BENCH_ONLY=${only}`);
  process.exit(1);
}

const rows: BenchRow[] = [];
const failures: string[] = [];
let current: ReturnType<typeof spawn> | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (current?.pid) process.kill(-current.pid, signal);
    process.exit(130);
  });
}

const started = Date.now();
const loadAtStart = loadavg()[0]!;
for (const script of scripts) {
  console.log(`\n=== ${script}`);
  const before = rows.length;
  const code = await runScript(join(dir, script));
  if (code !== 0) failures.push(`${script} ended with ${code}`);
  else if (rows.length === before) failures.push(`${script} reported no result`);
}

printTable(rows);
console.log(`\n${environment()}; ${((Date.now() - started) / 1000).toFixed(0)} s`);
// other work on the machine moves every figure: the 1-minute load average says how much there was
console.log(`load average (1 min) at the start ${loadAtStart.toFixed(2)}, at the end ${loadavg()[0]!.toFixed(2)}`);
if (failures.length > 0) {
  console.log(`\nFAILED: ${failures.join('; ')}`);
  process.exitCode = 1;
}

/** Runs one benchmark to its end; answers its exit code (a signal's name when it was killed). */
function runScript(path: string): Promise<number | string> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path], {
      env: process.env,
      stdio: ['ignore', 'pipe', 'inherit'],
      detached: true, // its own process group: stopping it stops the servers it forked too
    });
    current = child;
    const limit = setTimeout(() => {
      console.log(`${path}: still running after ${BENCH_LIMIT_MS / 60_000} min, stopped`);
      process.kill(-child.pid!, 'SIGKILL');
    }, BENCH_LIMIT_MS);
    createInterface({ input: child.stdout }).on('line', (line) => {
      const row = parseRow(line);
      if (row) rows.push(row);
      else console.log(line);
    });
    child.on('close', (code, signal) => {
      clearTimeout(limit);
      current = undefined;
      resolve(code ?? signal ?? 'unknown');
    });
  });
}

function printTable(all: BenchRow[]): void {
  const header = ['operation', 'req/s', 'p50 ms', 'p99 ms', 'ratio', 'target', 'met'];
  for (const group of [...new Set(all.map((row) => row.group))]) {
    const inGroup = all.filter((row) => row.group === group);
    const cells = inGroup.map((row) => [
      row.operation,
      row.rps === null ? '' : Math.round(row.rps).toString(),
      row.p50_ms === null ? '' : row.p50_ms.toFixed(2),
      row.p99_ms === null ? '' : row.p99_ms.toFixed(2),
      row.ratio === null ? '' : `${row.ratio.toFixed(2)}×`,
      row.target ?? '',
      row.met === null ? '' : row.met ? 'yes' : 'NO',
    ]);
    const widths = header.map((title, i) => Math.max(title.length, ...cells.map((line) => line[i]!.length)));
    // numbers right-aligned; a markdown table as it stands, for RESULTS.md
    const format = (line: string[]) => `| ${line.map((cell, i) => (i >= 1 && i <= 4 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join(' | ')} |`;
    console.log(`\n## ${group}\n`);
    console.log(format(header));
    console.log(`|${widths.map((width, i) => (i >= 1 && i <= 4 ? `${'-'.repeat(width + 1)}:` : '-'.repeat(width + 2))).join('|')}|`);
    for (const line of cells) console.log(format(line));
    const notes = inGroup.filter((row) => row.note);
    if (notes.length > 0) console.log('');
    for (const row of notes) console.log(`- ${row.operation}: ${row.note}`);
  }
}

function environment(): string {
  const database = process.env.DATABASE_URL ? `PostgreSQL at ${hostOf(process.env.DATABASE_URL)}` : 'embedded PGlite';
  const redis = process.env.REDIS_URL ? `Redis at ${hostOf(process.env.REDIS_URL)}` : 'in-process signaling store and bus';
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  return `Node ${process.version}, ${availableParallelism()} CPUs (${cpu}), ${database}, ${redis}, ${new Date().toISOString().slice(0, 10)}`;
}

/** Host and port only: a URL's credentials stay out of the output. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'a configured server';
  }
}
