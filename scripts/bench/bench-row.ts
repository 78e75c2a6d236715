// One result row of a benchmark, as `npm run bench` (run.ts) collects them: a benchmark prints any
// text it likes plus one line per row, `BENCH_ROW <json>`. Shared by the runner and the benchmarks
// so that both sides read and write the same shape.

export interface BenchRow {
  /** The table section: `http`, `signaling`, … */
  group: string;
  operation: string;
  rps: number | null;
  p50_ms: number | null;
  p99_ms: number | null;
  /** The `operation` of the row this one is compared with; null for a baseline or a row without one. */
  baseline: string | null;
  /** This row's figure divided by the baseline's (req/s for HTTP: higher is better). */
  ratio: number | null;
  /** The target in words, e.g. `≥ 0.5× baseline, p99 < 25 ms`; null when there is none. */
  target: string | null;
  met: boolean | null;
  note: string;
}

export const ROW_PREFIX = 'BENCH_ROW ';

/** A row maker for one table section: every figure null and no note unless given. */
export function rowsOf(group: string): (fields: Partial<BenchRow> & Pick<BenchRow, 'operation'>) => BenchRow {
  return (fields) => ({ group, rps: null, p50_ms: null, p99_ms: null, baseline: null, ratio: null, target: null, met: null, note: '', ...fields });
}

export function emitRow(row: BenchRow): void {
  console.log(`${ROW_PREFIX}${JSON.stringify(row)}`);
}

/** The row of a `BENCH_ROW` line; undefined for any other line (or a row that does not parse). */
export function parseRow(line: string): BenchRow | undefined {
  if (!line.startsWith(ROW_PREFIX)) return undefined;
  try {
    const row = JSON.parse(line.slice(ROW_PREFIX.length)) as BenchRow;
    return typeof row.operation === 'string' && typeof row.group === 'string' ? row : undefined;
  } catch {
    return undefined;
  }
}
