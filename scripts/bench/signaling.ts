// The signaling fan-out under load: one room of 1,000 participants (the owner as moderator and 999
// guests of one invite code), (a) on one instance and (b) split over two instances sharing Redis.
// Measures the time from the moderator's timer `start` until the last participant has `started`
// (median and p99 of 20 runs, each: start, wait for everyone, stop, wait for everyone), and the
// server's memory per connected participant. The server runs in a child process
// (signaling-server.ts) so that its memory is its own; the clients live here.
// Run: npm run bench:signaling   (REDIS_URL=redis://… for the Redis rows; DATABASE_URL=postgres://… optional)
// BENCH_PARTICIPANTS=200 for a quick try.
import { execSync, fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import type { ServerMemory, ServerReady, ServerRequest } from './signaling-server.js';

const PARTICIPANTS = Number(process.env.BENCH_PARTICIPANTS ?? 1000);
const RUNS = 20;
const WARM_UPS = 2;
/** Participants starting and joining at the same time while the room fills. */
const JOIN_CONCURRENCY = 50;
const PROTOCOL = 'service-signaling-json-v1.0';
const WAIT_MS = 60_000;
const redisUrl = process.env.REDIS_URL || undefined;

// ---------------------------------------------------------------- the room's clients

/** What the clients of one room have received of the current run. */
class RoomClients {
  readonly sockets: WebSocket[] = [];
  frames = 0;
  private counts = { started: 0, stopped: 0 };
  private last = { started: 0, stopped: 0 };
  private waiting?: { message: 'started' | 'stopped'; resolve: (lastAt: number) => void };
  timerId = '';
  errors: string[] = [];

  /** A joined participant's socket: counts the timer frames (the room's other frames are only counted). */
  watch(ws: WebSocket): void {
    this.sockets.push(ws);
    ws.on('message', (data) => {
      this.frames++;
      const text = data.toString();
      if (!text.includes('"namespace":"timer"')) return;
      const { payload } = JSON.parse(text);
      if (payload.message === 'error') this.errors.push(payload.error);
      if (payload.message !== 'started' && payload.message !== 'stopped') return;
      const message: 'started' | 'stopped' = payload.message;
      if (message === 'started') this.timerId = payload.timer_id;
      this.counts[message]++;
      this.last[message] = performance.now();
      const waiting = this.waiting;
      if (waiting?.message === message && this.counts[message] === this.sockets.length) waiting.resolve(this.last[message]);
    });
  }

  /** Resolves with the arrival time of the last participant's `message` of this run. */
  everyone(message: 'started' | 'stopped'): Promise<number> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${this.counts[message]} of ${this.sockets.length} got ${message} within ${WAIT_MS} ms (errors: ${this.errors})`)),
        WAIT_MS,
      );
      this.waiting = {
        message,
        resolve: (at) => {
          clearTimeout(timer);
          resolve(at);
        },
      };
    });
  }

  newRun(): void {
    this.counts = { started: 0, stopped: 0 };
  }

  /** Waits until no frame has arrived for `ms` (the joins' `joined` events have all been delivered). */
  async quiet(ms = 500): Promise<void> {
    for (let seen = -1; seen !== this.frames; ) {
      seen = this.frames;
      await new Promise((resolve) => setTimeout(resolve, ms));
    }
  }
}

/** Starts (a ticket over HTTP), opens the socket and joins; resolves once `join_success` arrived. */
async function join(httpUrl: string, path: string, body: unknown, token: string | undefined, name: string): Promise<WebSocket> {
  const response = await fetch(`${httpUrl}/v1${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
  const { ticket } = (await response.json()) as { ticket: string };
  const ws = new WebSocket(`${httpUrl.replace(/^http/, 'ws')}/signaling`, [PROTOCOL, `ticket#${ticket}`]);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  ws.send(JSON.stringify({ namespace: 'control', payload: { action: 'join', display_name: name } }));
  await new Promise<void>((resolve, reject) => {
    const onMessage = (data: WebSocket.RawData) => {
      const { namespace, payload } = JSON.parse(data.toString());
      if (namespace === 'control' && payload.message === 'join_success') {
        ws.off('message', onMessage);
        resolve();
      } else if (payload.message === 'error' || payload.message === 'join_blocked' || payload.message === 'in_waiting_room') {
        reject(new Error(`${name} could not join: ${data}`));
      }
    };
    ws.on('message', onMessage);
  });
  return ws;
}

/** Runs `task` for 0..count-1 with at most `concurrency` at a time. */
async function pool(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

// ---------------------------------------------------------------- the server process

function startServer(instances: number, redis: boolean): ChildProcess {
  const script = fileURLToPath(new URL('./signaling-server.ts', import.meta.url));
  return fork(script, [String(instances), ...(redis ? ['--redis'] : [])], { execArgv: ['--import', 'tsx', '--expose-gc'] });
}

function nextMessage<T extends { type: string }>(server: ChildProcess, type: T['type']): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: T) => {
      if (message.type !== type) return;
      server.off('message', onMessage);
      server.off('exit', onExit);
      resolve(message);
    };
    const onExit = (code: number | null) => reject(new Error(`the server process exited (${code}) before sending ${type}`));
    server.on('message', onMessage);
    server.once('exit', onExit);
  });
}

async function memoryOf(server: ChildProcess): Promise<NodeJS.MemoryUsage> {
  const answer = nextMessage<ServerMemory>(server, 'memory');
  server.send({ type: 'memory' } satisfies ServerRequest);
  return (await answer).usage;
}

async function stopServer(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null || server.signalCode !== null) return;
  const exited = new Promise((resolve) => server.once('exit', resolve));
  server.send({ type: 'close' } satisfies ServerRequest);
  const killer = setTimeout(() => server.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(killer);
}

// ---------------------------------------------------------------- one scenario

interface Row {
  label: string;
  joinSeconds: number;
  medianMs: number;
  p99Ms: number;
  heapPerParticipant: number;
  rssPerParticipant: number;
}

/** nearest-rank percentile of sorted values */
const percentile = (sorted: number[], p: number) => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function scenario(label: string, instances: number, redis: boolean): Promise<Row> {
  console.log(`\n${label}: starting the server …`);
  const server = startServer(instances, redis);
  const room = new RoomClients();
  try {
    const ready = await nextMessage<ServerReady>(server, 'ready');
    const moderator = await join(ready.urls[0]!, `/rooms/${ready.roomId}/start`, {}, ready.ownerToken, 'Moderator');
    room.watch(moderator);
    let joinMs = 0;
    /** Guests `from`..`to`-1 join (alternating over the instances; the moderator is on the first), then the room settles. */
    async function guests(from: number, to: number): Promise<NodeJS.MemoryUsage> {
      const started = performance.now();
      await pool(to - from, JOIN_CONCURRENCY, async (i) => {
        const n = from + i;
        room.watch(await join(ready.urls[n % instances]!, `/rooms/${ready.roomId}/start_invited`, { invite_code: ready.inviteCode }, undefined, `Guest ${n}`));
      });
      joinMs += performance.now() - started;
      await room.quiet();
      return memoryOf(server);
    }
    // memory per participant from half the room to all of it: the room's and the instances' fixed
    // costs (hub, subscriptions, compiled code, database caches) are in both figures and cancel out
    const half = Math.floor(PARTICIPANTS / 2);
    const atHalf = await guests(1, half);
    const atFull = await guests(half, PARTICIPANTS);
    const added = PARTICIPANTS - half;
    console.log(`${room.sockets.length} participants joined in ${(joinMs / 1000).toFixed(1)} s (${room.frames} frames received meanwhile)`);

    const latencies: number[] = [];
    for (let run = 0; run < WARM_UPS + RUNS; run++) {
      room.newRun();
      const allStarted = room.everyone('started');
      const sentAt = performance.now();
      moderator.send(JSON.stringify({ namespace: 'timer', payload: { action: 'start', kind: 'stopwatch', enable_ready_check: false } }));
      const lastStarted = await allStarted;
      if (run >= WARM_UPS) latencies.push(lastStarted - sentAt);
      const allStopped = room.everyone('stopped');
      moderator.send(JSON.stringify({ namespace: 'timer', payload: { action: 'stop', timer_id: room.timerId } }));
      await allStopped;
    }
    if (room.errors.length > 0) throw new Error(`timer errors during the runs: ${room.errors.join(', ')}`);
    latencies.sort((a, b) => a - b);
    return {
      label,
      joinSeconds: joinMs / 1000,
      medianMs: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      heapPerParticipant: (atFull.heapUsed + atFull.external - atHalf.heapUsed - atHalf.external) / added,
      rssPerParticipant: (atFull.rss - atHalf.rss) / added,
    };
  } finally {
    for (const ws of room.sockets) ws.terminate();
    await stopServer(server);
  }
}

// ---------------------------------------------------------------- main

const limit = execSync('ulimit -n', { shell: '/bin/sh' }).toString().trim();
if (limit !== 'unlimited' && Number(limit) < 4096) {
  console.log(`the open-file limit is ${limit}: ${PARTICIPANTS} sockets on each side need more. Raise it first: ulimit -n 4096`);
}
console.log(
  `signaling fan-out: one room of ${PARTICIPANTS} participants (1 moderator, ${PARTICIPANTS - 1} guests of one invite code), ` +
    `${RUNS} runs after ${WARM_UPS} warm-ups; database: ${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite in memory'}`,
);

const rows: Row[] = [await scenario('1 instance, in-process bus and store', 1, false)];
if (redisUrl) {
  rows.push(await scenario('1 instance, Redis', 1, true));
  rows.push(await scenario(`2 instances, Redis (${Math.ceil(PARTICIPANTS / 2)} + ${Math.floor(PARTICIPANTS / 2)})`, 2, true));
} else {
  console.log('\nREDIS_URL is not set: the scenarios on Redis (one instance, and the room split over two instances) are skipped');
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
const ms = (value: number) => `${value.toFixed(1)} ms`;
console.log(`\n${'scenario'.padEnd(40)} ${'join all'.padStart(9)}   ${'start → last started'.padStart(21)}   ${'server memory per participant'.padStart(29)}`);
console.log(`${''.padEnd(40)} ${''.padStart(9)}   ${'median'.padStart(9)} ${'p99'.padStart(11)}   ${'heap+external'.padStart(15)} ${'RSS'.padStart(13)}`);
for (const row of rows) {
  console.log(
    `${row.label.padEnd(40)} ${`${row.joinSeconds.toFixed(1)} s`.padStart(9)}   ${ms(row.medianMs).padStart(9)} ${ms(row.p99Ms).padStart(11)}   ` +
      `${kib(row.heapPerParticipant).padStart(15)} ${kib(row.rssPerParticipant).padStart(13)}`,
  );
}
console.log(
  `\np99 of ${RUNS} runs is the slowest run (nearest rank). Memory: the server process after a full GC with everyone joined,\n` +
    'minus the same with half of them, divided by the participants added (two instances share one process: their sum).\n' +
    'heap+external is what stays allocated; RSS also keeps the high-water mark of what the joins allocated for a moment\n' +
    '(each join_success lists the whole room), so it varies from run to run and is an upper bound.',
);
