// The rooms of the signaling benchmark (signaling.bench.ts), each ready for timer runs: a bare `ws`
// server's clients (bare-ws-server.ts) and a Convene room on one or two instances
// (signaling-server.ts). The servers run in child processes of their own; every client lives in
// this process, the same code counting the same frames for both, so that the baseline and Convene
// differ only in their server.
//
// A timer run: one client sends `timer` `start`, and the run's time is from that send until the
// last client has `started`; then `stop`, and the run ends when everyone has `stopped`.
import { cpuSecondsBetween, processesNamed, sample, type CpuSample } from './proc-cpu.js';
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import type { ServerCpu, ServerMemory, ServerReady, ServerRequest } from './signaling-server.js';

const PROTOCOL = 'service-signaling-json-v1.0';
const WAIT_MS = 60_000;
/** Participants starting and opening their sockets at the same time while a room fills (bare clients too). */
const CONNECT_CONCURRENCY = 50;
/**
 * Then they join in waves of this many at once, as a room fills at a meeting's start. Each arrival
 * is a `joined` to everyone already in, n²/2 frames for n participants; the events of a wave leave
 * each socket together (src/signaling/socket-writes.ts), one write for many frames, which is what
 * lets a room of thousands fill in minutes rather than many more.
 */
const JOIN_WAVE = 250;
/** Guests that join and leave before the empty room's memory is taken, so that its code paths have run. */
const WARM_UP_GUESTS = 50;
/**
 * How long a room is left alone before its memory is taken: a join may keep some state for a few
 * seconds (the control module remembers the recent arrivals a joiner's member list named, for 5 s),
 * which is not what a connected participant holds.
 */
const SETTLE_MS = 6_000;
/** Where a server frame's namespace and `message` are: Convene and the baseline write them first. */
const HEAD_BYTES = 128;
/** How a timer frame begins (`{` and then this): the clients look no further into the others. */
const TIMER_FRAME = Buffer.from('"namespace":"timer"');

/** A room of clients ready for timer runs. */
export interface Room {
  label: string;
  participants: number;
  /** Seconds until everyone was in (joined, or for bare clients connected). */
  fillSeconds: number;
  /** Frames the clients received while the room filled (every `joined` reaches everyone already in). */
  fillFrames: number;
  /**
   * CPU seconds the filling took the server processes (of which in the kernel: `serversSystem`;
   * after every socket was open, in the joins: `serversJoins`), and the clients' (this process).
   */
  /** `postgres`, `redis`: the machine's PostgreSQL and Redis servers over the fill (Convene's rooms only). */
  fillCpu: { servers: number; serversSystem: number; serversJoins?: number; clients: number; postgres?: number; redis?: number };
  /** The server memory (heap + external, after full collections) per participant beyond the first; when asked for. */
  bytesPerParticipant?: number;
  /** The server processes' resident memory, summed, with everyone in. */
  rssFull: number;
  /** One timer run; resolves with the milliseconds from `start` until the last `started`. */
  timerRun(): Promise<number>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------- clients

/** What the clients of one room have received of the current run. */
class RoomClients {
  readonly sockets: WebSocket[] = [];
  frames = 0;
  private counts = { started: 0, stopped: 0 };
  private waiting?: { message: 'started' | 'stopped'; resolve: (lastAt: number) => void };
  timerId = '';
  errors: string[] = [];

  /** A participant's socket: counts the timer frames (the room's other frames are only counted). */
  watch(ws: WebSocket): void {
    this.sockets.push(ws);
    ws.on('message', (data: Buffer) => {
      this.frames++;
      if (data.compare(TIMER_FRAME, 0, TIMER_FRAME.length, 1, 1 + TIMER_FRAME.length) !== 0) return;
      const { payload } = JSON.parse(data.toString());
      if (payload.message === 'error') this.errors.push(payload.error);
      if (payload.message !== 'started' && payload.message !== 'stopped') return;
      const message: 'started' | 'stopped' = payload.message;
      if (message === 'started') this.timerId = payload.timer_id;
      const waiting = this.waiting;
      if (++this.counts[message] === this.sockets.length && waiting?.message === message) waiting.resolve(performance.now());
    });
  }

  /** Resolves with the arrival time of the last participant's `message` of this run. */
  everyone(message: 'started' | 'stopped'): Promise<number> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${this.counts[message]} of ${this.sockets.length} got ${message} within ${WAIT_MS} ms (errors: ${this.errors.join(',')})`)),
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

  /** One run from `sender`: start, everyone has `started`, stop, everyone has `stopped`. */
  async timerRun(sender: WebSocket): Promise<number> {
    this.newRun();
    const allStarted = this.everyone('started');
    const sentAt = performance.now();
    sender.send(JSON.stringify({ namespace: 'timer', payload: { action: 'start', kind: 'stopwatch', enable_ready_check: false } }));
    const lastStarted = await allStarted;
    const allStopped = this.everyone('stopped');
    sender.send(JSON.stringify({ namespace: 'timer', payload: { action: 'stop', timer_id: this.timerId } }));
    await allStopped;
    if (this.errors.length > 0) throw new Error(`timer errors during the runs: ${this.errors.join(', ')}`);
    return lastStarted - sentAt;
  }

  /** Begins a run, after checking that the last one reached each participant once (a duplicate is a bug, not a figure). */
  private newRun(): void {
    for (const [message, count] of Object.entries(this.counts)) {
      if (count > this.sockets.length) throw new Error(`${count} ${message} events reached ${this.sockets.length} participants in one run`);
    }
    this.counts = { started: 0, stopped: 0 };
  }

  /** Waits until no frame has arrived for `ms` (the joins' `joined` events have all been delivered). */
  async quiet(ms = 500): Promise<void> {
    for (let seen = -1; seen !== this.frames;) {
      seen = this.frames;
      await sleep(ms);
    }
  }

  terminate(): void {
    for (const ws of this.sockets) ws.terminate();
  }
}

function open(url: string, protocols: string[] = []): Promise<WebSocket> {
  const ws = new WebSocket(url, protocols);
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

/** Starts (a ticket over HTTP) and opens the socket. */
async function connect(httpUrl: string, path: string, body: unknown, token?: string): Promise<WebSocket> {
  const response = await fetch(`${httpUrl}/v1${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
  const { ticket } = (await response.json()) as { ticket: string };
  return open(`${httpUrl.replace(/^http/, 'ws')}/signaling`, [PROTOCOL, `ticket#${ticket}`]);
}

/**
 * Joins; resolves once `join_success` arrived. Frames are told apart by their head: `join_success`
 * lists the whole room, and parsing it for each joiner would make the clients, not the server, the
 * bottleneck of a large room's filling.
 */
async function join(ws: WebSocket, name: string): Promise<void> {
  ws.send(JSON.stringify({ namespace: 'control', payload: { action: 'join', display_name: name } }));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} had no join_success within ${WAIT_MS} ms`)), WAIT_MS);
    const onMessage = (data: Buffer) => {
      const head = data.toString('utf8', 0, HEAD_BYTES);
      if (head.includes('"namespace":"control"') && head.includes('"message":"join_success"')) {
        ws.off('message', onMessage);
        clearTimeout(timer);
        resolve();
      } else if (/"message":"(error|join_blocked|in_waiting_room)"/.test(head)) {
        clearTimeout(timer);
        reject(new Error(`${name} could not join: ${data.toString()}`));
      }
    };
    ws.on('message', onMessage);
  });
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------- server processes

/** `BENCH_CPU_PROF=<dir>`: every server process writes its CPU profile there when it stops. */
function startServer(script: string, args: string[]): ChildProcess {
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  return fork(fileURLToPath(new URL(script, import.meta.url)), args, { execArgv: ['--import', 'tsx', '--expose-gc', ...profile] });
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

interface Usage {
  /** Live memory (heap and external after full collections), bytes. */
  retained: number;
  rss: number;
  /** CPU time so far, seconds, and of it in the kernel (system calls: the sockets' writes). */
  cpu: number;
  system: number;
}

/** The memory and CPU time of every server process, summed. */
async function usageOf(servers: ChildProcess[]): Promise<Usage> {
  const answers = await Promise.all(
    servers.map((server) => {
      const answer = nextMessage<ServerMemory>(server, 'memory');
      server.send({ type: 'memory' } satisfies ServerRequest);
      return answer;
    }),
  );
  return answers.reduce(
    (sum, { usage, cpu }) => ({
      retained: sum.retained + usage.heapUsed + usage.external,
      rss: sum.rss + usage.rss,
      cpu: sum.cpu + (cpu.user + cpu.system) / 1e6,
      system: sum.system + cpu.system / 1e6,
    }),
    { retained: 0, rss: 0, cpu: 0, system: 0 },
  );
}

/** The CPU seconds of every server process so far, summed (no collections first, unlike usageOf). */
async function cpuOf(servers: ChildProcess[]): Promise<number> {
  const answers = await Promise.all(
    servers.map((server) => {
      const answer = nextMessage<ServerCpu>(server, 'cpu');
      server.send({ type: 'cpu' } satisfies ServerRequest);
      return answer;
    }),
  );
  return answers.reduce((sum, { cpu }) => sum + (cpu.user + cpu.system) / 1e6, 0);
}

const cpuSeconds = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

async function stopServer(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null || server.signalCode !== null) return;
  const exited = new Promise((resolve) => server.once('exit', resolve));
  server.send({ type: 'close' } satisfies ServerRequest);
  const killer = setTimeout(() => server.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(killer);
}

// ---------------------------------------------------------------- the rooms

/** `participants` clients of a bare `ws` server; the first one sends the timer commands. */
export async function bareWsRoom(participants: number): Promise<Room> {
  const server = startServer('./bare-ws-server.ts', []);
  const clients = new RoomClients();
  try {
    const wsUrl = `${(await nextMessage<ServerReady>(server, 'ready')).url.replace(/^http/, 'ws')}/signaling`;
    const sender = await open(wsUrl);
    clients.watch(sender);
    // the sender alone, after a broadcast, against everyone: what the other sockets hold
    await clients.timerRun(sender);
    const alone = await usageOf([server]);
    const [started, clientCpu] = [performance.now(), cpuSeconds()];
    await pool(participants - 1, CONNECT_CONCURRENCY, async () => clients.watch(await open(wsUrl)));
    const fillSeconds = (performance.now() - started) / 1000;
    const fillClientCpu = cpuSeconds() - clientCpu;
    const full = await usageOf([server]);
    return {
      label: 'bare ws broadcast',
      participants,
      fillSeconds,
      fillFrames: 0,
      fillCpu: { servers: full.cpu - alone.cpu, serversSystem: full.system - alone.system, clients: fillClientCpu },
      bytesPerParticipant: (full.retained - alone.retained) / (participants - 1),
      rssFull: full.rss,
      timerRun: () => clients.timerRun(sender),
      async close() {
        clients.terminate();
        await stopServer(server);
      },
    };
  } catch (err) {
    clients.terminate();
    await stopServer(server);
    throw err;
  }
}

/**
 * A Convene room of `participants`: the owner as moderator (who sends the timer commands, on the
 * first instance) and guests of one invite code, alternating over the instances. Two instances
 * share Redis and the PostgreSQL database `databaseUrl` names; one instance has the in-process bus
 * and store and PGlite. `memory`: also measure the server memory per participant (about 15 s more).
 */
export async function conveneRoom(participants: number, instances: 1 | 2, options: { memory: boolean }): Promise<Room> {
  const servers = [startServer('./signaling-server.ts', ['primary', ...(instances === 2 ? ['--redis'] : [])])];
  const clients = new RoomClients();
  try {
    const ready = await nextMessage<ServerReady>(servers[0]!, 'ready');
    const { roomId, ownerToken, inviteCode, databaseUrl, issuer } = ready.room!;
    const urls = [ready.url];
    if (instances === 2) {
      if (!databaseUrl) throw new Error('two instances need DATABASE_URL: a database both instance processes share');
      servers.push(startServer('./signaling-server.ts', ['secondary', databaseUrl, issuer]));
      urls.push((await nextMessage<ServerReady>(servers[1]!, 'ready')).url);
    }
    const moderator = await connect(urls[0]!, `/rooms/${roomId}/start`, {}, ownerToken);
    clients.watch(moderator);
    await join(moderator, 'Moderator');
    /** The servers' CPU seconds when the last guests' sockets were all open, before their joins. */
    let connectedCpu = 0;
    /** Guests `from`..`to`-1 connect (alternating over the instances), then join in waves, then the room settles; resolves with the seconds all that took. */
    async function guests(from: number, to: number): Promise<number> {
      const started = performance.now();
      const sockets: WebSocket[] = [];
      await pool(to - from, CONNECT_CONCURRENCY, async (i) => {
        sockets[i] = await connect(urls[(from + i) % instances]!, `/rooms/${roomId}/start_invited`, { invite_code: inviteCode });
      });
      connectedCpu = await cpuOf(servers);
      for (let wave = 0; wave < sockets.length; wave += JOIN_WAVE) {
        const joining = sockets.slice(wave, wave + JOIN_WAVE);
        // watched from before its join, so that every frame of the room is counted
        for (const ws of joining) clients.watch(ws);
        await Promise.all(joining.map((ws, i) => join(ws, `Guest ${from + wave + i}`)));
      }
      const seconds = (performance.now() - started) / 1000;
      await clients.quiet();
      return seconds;
    }

    // Memory: the room with the moderator alone, after guests have come, run a timer and gone (so
    // that the compiled code, pools and caches of joining are in it), against the full room. The
    // difference is what the connected participants hold; the fixed costs are in both figures.
    if (options.memory) {
      await guests(1, 1 + WARM_UP_GUESTS);
      await clients.timerRun(moderator);
      for (const ws of clients.sockets.splice(1)) ws.close();
      await clients.quiet();
      await sleep(SETTLE_MS);
    }
    const empty = await usageOf(servers);
    const [framesBefore, clientCpu] = [clients.frames, cpuSeconds()];
    const backingBefore = backingSample();
    const fillSeconds = await guests(1, participants);
    const backing = backingSince(backingBefore);
    const fillFrames = clients.frames - framesBefore;
    const fillClientCpu = cpuSeconds() - clientCpu;
    const filled = await usageOf(servers);
    if (options.memory) await sleep(SETTLE_MS);
    const full = options.memory ? await usageOf(servers) : filled;
    return {
      label: instances === 1 ? 'Convene, 1 instance' : 'Convene, 2 instances through Redis',
      participants,
      fillSeconds,
      fillFrames,
      fillCpu: {
        servers: filled.cpu - empty.cpu,
        serversSystem: filled.system - empty.system,
        serversJoins: filled.cpu - connectedCpu,
        clients: fillClientCpu,
        ...backing,
      },
      ...(options.memory ? { bytesPerParticipant: (full.retained - empty.retained) / (participants - 1) } : {}),
      rssFull: full.rss,
      timerRun: () => clients.timerRun(moderator),
      close: closeAll,
    };
  } catch (err) {
    await closeAll();
    throw err;
  }

  async function closeAll(): Promise<void> {
    clients.terminate();
    // the second instance first: the first owns the database and the issuer
    for (const server of [...servers].reverse()) await stopServer(server);
  }
}

/** The machine's PostgreSQL and Redis server processes, sampled for their CPU (the "scale on paper" of RESULTS.md). */
function backingSample(): { postgres: CpuSample; redis: CpuSample } {
  return { postgres: sample(processesNamed('postgres')), redis: sample(processesNamed('redis-server')) };
}

function backingSince(before: { postgres: CpuSample; redis: CpuSample }): { postgres: number; redis: number } {
  const now = backingSample();
  return { postgres: cpuSecondsBetween(before.postgres, now.postgres), redis: cpuSecondsBetween(before.redis, now.redis) };
}
