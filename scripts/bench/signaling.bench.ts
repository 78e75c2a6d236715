// The signaling fan-out against the bare limit of this machine, in the same run (issue 7): how long
// until the last participant of a room has the timer's `started`, from the moderator's `start`.
//
// For each room size (1,000 and 5,000 participants): a bare `ws` server broadcasting the same frame
// to as many clients (the baseline), Convene on one instance (in-process bus and store; PGlite, or
// PostgreSQL with DATABASE_URL), and Convene on two instances sharing Redis and PostgreSQL, the
// guests alternating between them (needs REDIS_URL and DATABASE_URL; without them those rows say
// they were skipped). The baseline's clients stay connected while each Convene room runs, and the
// runs alternate, one bare and one Convene, so that whatever else the machine does at that moment
// falls on both. Also the server memory per idle participant of the one-instance room (its stores
// in the process: the larger case), against the bare server's per connection. Rooms, clients and
// processes: signaling-scenarios.ts.
//
// Prints its progress and results, and one `BENCH_ROW` line per result for `npm run bench` (run.ts).
// Run: npm run bench:signaling (signaling.ts runs this file), or npm run bench (every benchmark).
// Options (environment): BENCH_PARTICIPANTS=1000,5000 (room sizes), BENCH_RUNS=20 (timer runs per
// room after 2 warm-ups), BENCH_CPU_PROF=<dir> (the server processes write CPU profiles there).
import { execSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { emitRow, rowsOf, type BenchRow } from './bench-row.js';
import { bareWsRoom, conveneRoom, type Room } from './signaling-scenarios.js';

const SIZES = (process.env.BENCH_PARTICIPANTS ?? '1000,5000').split(',').map(Number);
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const WARM_UPS = 2;
/** The targets, set for rooms of 1,000: the last `started` within this many times the bare broadcast's. */
const TARGET_SIZE = 1000;
const TARGET_RATIO = { 1: 2, 2: 3 } as const;
const MEMORY_TARGET_KIB = 40;
const twoInstances = Boolean(process.env.REDIS_URL && process.env.DATABASE_URL);

/** nearest-rank percentile of sorted values */
const percentile = (sorted: number[], p: number) => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
const median = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
const p99 = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    99,
  );
const count = (n: number) => n.toLocaleString('en-US');
const kib = (bytes: number) => bytes / 1024;

const limit = execSync('ulimit -n', { shell: '/bin/sh' }).toString().trim();
const needed = 2 * Math.max(...SIZES) + 100;
if (limit !== 'unlimited' && Number(limit) < needed) {
  console.log(`the open-file limit is ${limit}: ${count(needed)} sockets need more. Raise it first: ulimit -n ${needed}`);
}
console.log(
  `signaling fan-out: rooms of ${SIZES.map(count).join(' and ')} participants, ${RUNS} timer runs each after ${WARM_UPS} warm-ups, ` +
    `alternating with the bare ws baseline; two instances: ${twoInstances ? 'Redis and PostgreSQL' : 'skipped (REDIS_URL and DATABASE_URL unset)'}`,
);

const row = rowsOf('signaling');

/** Timer runs on `room`, each right after one on `bare`; the times of both, warm-ups left out. */
async function alternate(room: Room, bare: Room, bareTimes: number[]): Promise<number[]> {
  const times: number[] = [];
  for (let run = 0; run < WARM_UPS + RUNS; run++) {
    const bareMs = await bare.timerRun();
    const ms = await room.timerRun();
    if (run < WARM_UPS) continue;
    bareTimes.push(bareMs);
    times.push(ms);
  }
  console.log(
    `  start → last started: median ${median(times).toFixed(1)} ms, p99 ${p99(times).toFixed(1)} ms (bare ws meanwhile: median ${median(bareTimes.slice(-RUNS)).toFixed(1)} ms)`,
  );
  return times;
}

function describeFill(room: Room): void {
  const frames = room.fillFrames > 0 ? `, ${count(room.fillFrames)} frames received meanwhile` : '';
  const { servers, serversSystem, serversJoins, clients, postgres, redis } = room.fillCpu;
  const joins = serversJoins === undefined ? '' : `, the joins ${serversJoins.toFixed(1)} s`;
  const backing = postgres === undefined || redis === undefined ? '' : `, PostgreSQL ${postgres.toFixed(2)} s, Redis ${redis.toFixed(2)} s`;
  const cpu = `CPU: servers ${servers.toFixed(1)} s (system ${serversSystem.toFixed(1)} s${joins}), clients ${clients.toFixed(1)} s${backing}`;
  console.log(
    `  ${count(room.participants)} ${room.label === 'bare ws broadcast' ? 'connected' : 'joined'} in ${room.fillSeconds.toFixed(1)} s (${cpu}${frames}); ` +
      `RSS ${(room.rssFull / 1048576).toFixed(0)} MiB`,
  );
}

for (const size of SIZES) {
  const operation = (what: string) => `timer fan-out, ${what}, ${count(size)} participants`;
  const bareName = operation('bare ws broadcast');
  const loadAtStart = loadavg()[0]!.toFixed(1);
  console.log(`\n${count(size)} participants (load average ${loadAtStart}): bare ws …`);
  const bare = await bareWsRoom(size);
  describeFill(bare);
  const bareTimes: number[] = [];
  /** The bare runs' median while each Convene room ran beside it. */
  const bareMedians: string[] = [];
  const rows: BenchRow[] = [];
  try {
    for (const instances of [1, 2] as const) {
      const label = instances === 1 ? 'Convene, 1 instance' : 'Convene, 2 instances through Redis';
      const target = size === TARGET_SIZE ? TARGET_RATIO[instances] : undefined;
      if (instances === 2 && !twoInstances) {
        rows.push(row({ operation: operation(label), note: 'skipped: two instances need REDIS_URL and DATABASE_URL (a database both share)' }));
        continue;
      }
      console.log(`${label} …`);
      const room = await conveneRoom(size, instances, { memory: instances === 1 });
      try {
        describeFill(room);
        const times = await alternate(room, bare, bareTimes);
        const bareMedian = median(bareTimes.slice(-RUNS));
        const ratio = median(times) / bareMedian;
        bareMedians.push(`${bareMedian.toFixed(2)} ms beside ${instances === 1 ? 'one instance' : 'two'}`);
        rows.push(
          row({
            operation: operation(label),
            p50_ms: median(times),
            p99_ms: p99(times),
            baseline: bareName,
            ratio,
            target: target ? `≤ ${target}× bare ws` : null,
            met: target ? ratio <= target : null,
            note:
              `ratio of the medians to the bare runs alternating with these (${bareMedian.toFixed(2)} ms); ` +
              `the room filled in ${room.fillSeconds.toFixed(0)} s (servers' CPU ${room.fillCpu.servers.toFixed(0)} s)` +
              (target ? '' : `; the targets are set at ${count(TARGET_SIZE)}`),
          }),
        );
        if (room.bytesPerParticipant !== undefined) {
          const perParticipant = kib(room.bytesPerParticipant);
          rows.push(
            row({
              operation: `server memory per idle participant, Convene 1 instance, ${count(size)} participants`,
              target: `< ${MEMORY_TARGET_KIB} KiB`,
              met: perParticipant < MEMORY_TARGET_KIB,
              note:
                `${perParticipant.toFixed(1)} KiB (heap + external after full GCs, room settled, stores in the process; ` +
                `bare ws: ${kib(bare.bytesPerParticipant!).toFixed(1)} KiB per connection); RSS with everyone in: ${(room.rssFull / 1048576).toFixed(0)} MiB`,
            }),
          );
        }
      } finally {
        await room.close();
      }
    }
  } finally {
    await bare.close();
  }
  rows.unshift(
    row({
      operation: bareName,
      p50_ms: median(bareTimes),
      p99_ms: p99(bareTimes),
      note:
        `the same started frame serialised once and sent to every client (the ws README's broadcast); ${bareTimes.length} runs, ` +
        `alternating with Convene's (median ${bareMedians.join(', ')}); load average ${loadAtStart} → ${loadavg()[0]!.toFixed(1)}`,
    }),
  );
  console.log('');
  for (const result of rows) {
    const figures = result.p50_ms === null ? [] : [`p50 ${result.p50_ms.toFixed(2)} ms, p99 ${result.p99_ms!.toFixed(2)} ms`];
    const ratio = result.ratio === null ? [] : [`${result.ratio.toFixed(2)}× bare ws`];
    const met = result.met === null ? [] : [result.met ? `target ${result.target} met` : `target ${result.target} NOT met`];
    console.log(`${result.operation}: ${[...figures, ...ratio, ...met, result.note].join('; ')}`);
    emitRow(result);
  }
}
console.log(`\np99 of ${RUNS} runs is the slowest run (nearest rank); the bare rows pool the runs alternating with both Convene rooms.`);
