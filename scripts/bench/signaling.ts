// The signaling fan-out under load: one room of 1,000 participants (the owner as moderator and 999
// guests of one invite code), (a) on one instance and (b) split over two instances sharing Redis.
// Measures the time from the moderator's timer `start` until the last participant has `started`
// (median and p99 of 20 runs, each: start, wait for everyone, stop, wait for everyone), and the
// server's memory per connected participant. Each instance runs in a child process of its own
// (signaling-server.ts), so that its memory is its own and two instances have two event loops; the
// clients live here, in one process.
// Run: npm run bench:signaling   (REDIS_URL=redis://… for the Redis rows; the split room also needs
// DATABASE_URL=postgres://…, a database both instance processes share). BENCH_PARTICIPANTS=200 for a quick try.
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
/** Guests that join and leave before the empty room's memory is taken, so that its code paths have run. */
const WARM_UP_GUESTS = 50;
/**
 * How long the room is left alone before its memory is taken: a join may keep some state for a few
 * seconds (the control module remembers the recent arrivals a joiner's member list named, for 5 s),
 * which is not what a connected participant holds.
 */
const SETTLE_MS = 6_000;
const redisUrl = process.env.REDIS_URL || undefined;
const databaseUrl = process.env.DATABASE_URL || undefined;

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

  /** Begins a run, after checking that the last one reached each participant once (a duplicate is a bug, not a figure). */
  newRun(): void {
    for (const [message, count] of Object.entries(this.counts)) {
      if (count > this.sockets.length) throw new Error(`${count} ${message} events reached ${this.sockets.length} participants in one run`);
    }
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

// ---------------------------------------------------------------- the server processes

function startServer(args: string[]): ChildProcess {
  const script = fileURLToPath(new URL('./signaling-server.ts', import.meta.url));
  return fork(script, args, { execArgv: ['--import', 'tsx', '--expose-gc'] });
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

/** The live memory of every instance process, summed. */
async function memoryOf(servers: ChildProcess[]): Promise<{ retained: number; rss: number }> {
  const usages = await Promise.all(
    servers.map((server) => {
      const answer = nextMessage<ServerMemory>(server, 'memory');
      server.send({ type: 'memory' } satisfies ServerRequest);
      return answer;
    }),
  );
  return usages.reduce((sum, { usage }) => ({ retained: sum.retained + usage.heapUsed + usage.external, rss: sum.rss + usage.rss }), { retained: 0, rss: 0 });
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
  retainedPerParticipant: number;
  /** The instance processes' resident memory with the room full. */
  rssFull: number;
}

/** nearest-rank percentile of sorted values */
const percentile = (sorted: number[], p: number) => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function scenario(label: string, instances: 1 | 2, redis: boolean): Promise<Row> {
  console.log(`\n${label}: starting the server …`);
  const servers = [startServer(['primary', ...(redis ? ['--redis'] : [])])];
  const room = new RoomClients();
  try {
    const ready = await nextMessage<ServerReady>(servers[0]!, 'ready');
    const { roomId, ownerToken, inviteCode, databaseUrl: sharedDatabase, issuer } = ready.room!;
    const urls = [ready.url];
    if (instances === 2) {
      servers.push(startServer(['secondary', sharedDatabase!, issuer]));
      urls.push((await nextMessage<ServerReady>(servers[1]!, 'ready')).url);
    }
    const moderator = await join(urls[0]!, `/rooms/${roomId}/start`, {}, ownerToken, 'Moderator');
    room.watch(moderator);
    let joinMs = 0;
    /** Guests `from`..`to`-1 join (alternating over the instances; the moderator is on the first), then the room settles. */
    async function guests(from: number, to: number): Promise<void> {
      const started = performance.now();
      await pool(to - from, JOIN_CONCURRENCY, async (i) => {
        const n = from + i;
        room.watch(await join(urls[n % instances]!, `/rooms/${roomId}/start_invited`, { invite_code: inviteCode }, undefined, `Guest ${n}`));
      });
      joinMs += performance.now() - started;
      await room.quiet();
    }
    /** One run: start, everyone has `started`, stop, everyone has `stopped`; resolves with the first part's time. */
    async function timerRun(): Promise<number> {
      room.newRun();
      const allStarted = room.everyone('started');
      const sentAt = performance.now();
      moderator.send(JSON.stringify({ namespace: 'timer', payload: { action: 'start', kind: 'stopwatch', enable_ready_check: false } }));
      const lastStarted = await allStarted;
      const allStopped = room.everyone('stopped');
      moderator.send(JSON.stringify({ namespace: 'timer', payload: { action: 'stop', timer_id: room.timerId } }));
      await allStopped;
      return lastStarted - sentAt;
    }

    // Memory: the room with the moderator alone, after guests have come, run a timer and gone (so
    // that the compiled code, pools and caches of joining are in it), against the full room. The
    // difference is what the connected participants hold; the fixed costs are in both figures.
    await guests(1, 1 + WARM_UP_GUESTS);
    await timerRun();
    for (const ws of room.sockets.splice(1)) ws.close();
    await room.quiet();
    await sleep(SETTLE_MS);
    const empty = await memoryOf(servers);
    joinMs = 0;
    const framesBefore = room.frames;
    await guests(1, PARTICIPANTS);
    await sleep(SETTLE_MS);
    const full = await memoryOf(servers);
    console.log(`${room.sockets.length} participants joined in ${(joinMs / 1000).toFixed(1)} s (${room.frames - framesBefore} frames received meanwhile)`);

    const latencies: number[] = [];
    for (let run = 0; run < WARM_UPS + RUNS; run++) {
      const ms = await timerRun();
      if (run >= WARM_UPS) latencies.push(ms);
    }
    await room.quiet();
    room.newRun();
    if (room.errors.length > 0) throw new Error(`timer errors during the runs: ${room.errors.join(', ')}`);
    latencies.sort((a, b) => a - b);
    return {
      label,
      joinSeconds: joinMs / 1000,
      medianMs: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      retainedPerParticipant: (full.retained - empty.retained) / (PARTICIPANTS - 1),
      rssFull: full.rss,
    };
  } finally {
    for (const ws of room.sockets) ws.terminate();
    // the second instance first: the first owns the database and the issuer
    for (const server of servers.reverse()) await stopServer(server);
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
if (redisUrl) rows.push(await scenario('1 instance, Redis', 1, true));
else console.log('\nREDIS_URL is not set: the scenarios on Redis (one instance, and the room split over two instances) are skipped');
if (redisUrl && databaseUrl) rows.push(await scenario(`2 instances, Redis (${Math.ceil(PARTICIPANTS / 2)} + ${Math.floor(PARTICIPANTS / 2)})`, 2, true));
else if (redisUrl) console.log('\nDATABASE_URL is not set: the room split over two instance processes needs a database they share, and is skipped');

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
const ms = (value: number) => `${value.toFixed(1)} ms`;
console.log(`\n${'scenario'.padEnd(40)} ${'join all'.padStart(9)}   ${'start → last started'.padStart(21)}   ${'server memory per participant'.padStart(29)}`);
console.log(`${''.padEnd(40)} ${''.padStart(9)}   ${'median'.padStart(9)} ${'p99'.padStart(11)}   ${'heap+external'.padStart(15)} ${'(RSS, full)'.padStart(13)}`);
for (const row of rows) {
  console.log(
    `${row.label.padEnd(40)} ${`${row.joinSeconds.toFixed(1)} s`.padStart(9)}   ${ms(row.medianMs).padStart(9)} ${ms(row.p99Ms).padStart(11)}   ` +
      `${kib(row.retainedPerParticipant).padStart(15)} ${`${(row.rssFull / 1048576).toFixed(0)} MiB`.padStart(13)}`,
  );
}
console.log(
  `\np99 of ${RUNS} runs is the slowest run (nearest rank). Memory per participant: what the instance processes (summed)\n` +
    `hold after full GCs with everyone joined and ${SETTLE_MS / 1000} s of quiet, minus the same with the moderator alone (after\n` +
    `${WARM_UP_GUESTS} guests came and went), divided by the guests: heap and external memory, what stays allocated. RSS keeps\n` +
    'the high-water mark of what the joins allocated for a moment (each join_success lists the whole room), so a difference\n' +
    'of it per participant would be noise; it is shown whole, for the full room.',
);
