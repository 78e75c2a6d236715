// The HTTP hot paths under load, against the bare limit of this machine in the same run (issue 7).
//
// Processes: this one (set-up, the sequential listing, the table rows), the server under test
// (http-server.ts: Convene as src/main.ts builds it, from dist/, which this benchmark builds first
// (built.ts), logging at warn, the development identity provider signing the bench user's tokens),
// the three baselines (baseline-http.ts: node:http and
// the same query on the same data, through `pg` or with PGlite's own `query()` without DATABASE_URL,
// and as a named statement as Convene sends it; baseline-json.ts: node:http answering the tariff's
// JSON with no query, the bare limit of a request without one) and the load generator (load.ts:
// autocannon, 50 connections on 127.0.0.1). All servers are up at once; only the one under load works.
//
// The data: a fresh database (a new one on DATABASE_URL's server, dropped at the end; else PGlite in
// a temporary directory, copied for each baseline: PGlite is one process's), the bench user logged
// in through POST /v1/auth/login, a room of theirs, and the events benchmark's data (events-data.ts).
// The operations under load, one after the other:
//   - GET /v1/rooms/{id} and GET /v1/users/me: authenticated single-query reads, the targets' case;
//   - GET /v1/users/me/tariff: authenticated, no query (the user of a recent request is cached), so
//     the cost of the HTTP stack and the token check alone;
//   - POST /v1/rooms/{id}/start (a ticket into the signaling store: Redis with REDIS_URL);
//   - POST /v1/auth/login (ID-token signature check, user upsert);
//   - GET /v1/events (a year, first page) and GET /v1/events/{id}/instances (first page);
//   - and the named-statement and JSON baselines.
// Each gets a warm-up, then BENCH_SECONDS of load in ROUNDS runs that alternate with as many runs
// on the baseline: the machine is shared, and whatever else it does then falls on both sides of a
// ratio. The server's event-loop delay (http-server.ts) is taken over each operation's measured runs
// (p99 and max, the worst run's). Last, a year of events, all pages of 100 followed one after the
// other by one client (p99 target). Each note gives the server's CPU time per request (user +
// system, from /proc), and the end of the output compares those of the operations with the
// baselines' (issue 21's targets: a single-query GET at most 1.5× the named-statement baseline's, a
// request without a query at most 2× the JSON baseline's, a login at most 1 ms): first as measured
// above, each in its own stretch of the run, then once more in runs that alternate each such
// operation with its own baseline (`paired`).
// Run: npm run bench:http   (DATABASE_URL=… REDIS_URL=… for the real servers; BENCH_SECONDS=2 for
// a quick try; BENCH_OPERATION=<substring>[,<substring>…] for only the operations under load whose
// name contains one of them, the baselines always, and the events' data and year walk only when an
// events operation is among them; BENCH_CPU_PROF=<dir> writes a CPU profile of the server per
// operation there, profiler.ts; BENCH_EVENTS=<n> gives the bench user n events, events-data.ts;
// BENCH_WALKS=<n> walks the year n times).
import { cpuSecondsBetween, processesNamed, sample, type CpuSample } from './proc-cpu.js';
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { loadConfig } from '../../src/config/load.js';
import { mintDevTokens } from '../../src/domain/identity/dev-token.js';
import { emitRow, rowsOf, type BenchRow } from './bench-row.js';
import { buildConvene } from './built.js';
import { benchEventCount, jsonCaller, measureSequential, seedEvents, seedMoreEvents, walk, YEAR_RANGE, type Call } from './events-data.js';
import type { LoopDelay } from './http-server.js';
import type { LoadRequest, LoadResult } from './load.js';

const row = rowsOf('http');

const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const ROUNDS = 3;
const WARM_UP_SECONDS = 2;
const CONNECTIONS = 50;
/** Walks of the year's six pages for the listing's p99 (the slowest one of 100 is p99); BENCH_WALKS for fewer. */
const WALKS = Number(process.env.BENCH_WALKS ?? 100);
const databaseUrl = process.env.DATABASE_URL || undefined;
const redis = Boolean(process.env.REDIS_URL);
const onlyOperations = (process.env.BENCH_OPERATION ?? '').split(',');
const selected = (label: string) => onlyOperations.some((only) => label.includes(only));
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

const BASELINE = `baseline: bare node:http + ${databaseUrl ? 'pg' : 'PGlite'}, GET /rooms/{id}`;
const BASELINE_NOTE = `the same JSON from the same query, no framework or authentication${databaseUrl ? '' : "; with PGlite's own query(), as the embedded default has no PostgreSQL server for pg"}`;
const NAMED_BASELINE = `bare node:http + pg${databaseUrl ? '' : ' over PGlite'}, named statement, GET /rooms/{id}`;
const JSON_BASELINE = 'bare node:http, the same JSON as the tariff, no query';
const YEAR_PAGE = 'GET /v1/events (a year, first page of 30)';
const INSTANCES_PAGE = 'GET /v1/events/{id}/instances (first page of 30)';
const YEAR_WALK = 'GET /v1/events, a year: all 6 pages of 100, one client';
/** The events' data is seeded, and the year walked, only for a run that measures an events operation. */
const withEvents = [YEAR_PAGE, INSTANCES_PAGE, YEAR_WALK].some(selected);
const SINGLE_QUERY_TARGET = '≥ 0.50× baseline, p99 < 25 ms';
/** Issue 21's targets for the server's CPU per request: to a baseline's, or absolute (µs). */
const CPU_TARGETS: Record<string, { of: string; atMost: number } | { atMostMicros: number }> = {
  'GET /v1/rooms/{id}': { of: NAMED_BASELINE, atMost: 1.5 },
  'GET /v1/users/me': { of: NAMED_BASELINE, atMost: 1.5 },
  'GET /v1/users/me/tariff': { of: JSON_BASELINE, atMost: 2 },
  'POST /v1/auth/login': { atMostMicros: 1000 },
};

// ---------------------------------------------------------------- processes

function forkChild(script: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return fork(here(script), args, { env, execArgv: ['--import', 'tsx'] });
}

/** The child's first `ready` message; its exit before that is an error. */
function ready(child: ChildProcess, label: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`${label} exited with ${code} before it was ready`));
    child.once('exit', onExit);
    child.once('message', (message: { type: string; url: string }) => {
      child.off('exit', onExit);
      resolve(message.url);
    });
  });
}

/** The Convene server's event-loop delay since the previous call (which this one restarts). */
function loopDelayOf(server: ChildProcess): Promise<LoopDelay> {
  return new Promise((resolve) => {
    const onMessage = (message: { type: string }) => {
      if (message.type !== 'loop-delay') return;
      server.off('message', onMessage);
      resolve(message as LoopDelay);
    };
    server.on('message', onMessage);
    server.send({ type: 'loop-delay' });
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.send({ type: 'close' });
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
    probe.on('error', reject);
  });
}

async function onServer(url: string, ...statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const statement of statements) await client.query(statement);
  } finally {
    await client.end();
  }
}

/** Runs `fn` with an executor of SQL statements on the bench's database (PGlite: while Convene is stopped). */
async function withDatabase(url: string | undefined, pgliteDir: string, fn: (run: (statement: string) => Promise<unknown>) => Promise<void>): Promise<void> {
  if (url) return fn((statement) => onServer(url, statement));
  const pglite = await PGlite.create({ dataDir: pgliteDir });
  try {
    await fn((statement) => pglite.exec(statement));
  } finally {
    await pglite.close();
  }
}

/** User + system CPU seconds of a process so far, from /proc; undefined where there is none. */
function cpuSeconds(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------- load

type Target = Omit<LoadRequest, 'type' | 'connections' | 'seconds'>;

/** A server and what it answers to the load: one operation of Convene, or a baseline. */
interface Subject {
  label: string;
  server: ChildProcess;
  target: Target;
}

/** Several runs of one subject, pooled. */
class Series {
  private seconds = 0;
  private cpu: number | undefined = 0;
  /** CPU seconds of the machine's PostgreSQL and Redis servers over the runs (the bench's load alone on a quiet machine). */
  private backing = { postgres: 0, redis: 0 };
  private requests = 0;
  readonly latencies: number[] = [];
  errors = 0;
  private loopDelay: { p99: number; max: number } | undefined;

  add(result: LoadResult, cpuSeconds: number | undefined, backing: BackingCpu = { postgres: 0, redis: 0 }): void {
    this.backing.postgres += backing.postgres;
    this.backing.redis += backing.redis;
    this.seconds += result.seconds;
    this.requests += result.answers + result.errors;
    for (const latency of result.latencies) this.latencies.push(latency); // a spread of 100,000 arguments overflows the stack
    this.errors += result.errors;
    this.cpu = this.cpu === undefined || cpuSeconds === undefined ? undefined : this.cpu + cpuSeconds;
  }

  get rps(): number {
    return this.latencies.length / this.seconds;
  }

  percentile(p: number): number {
    const sorted = this.latencies.toSorted((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
  }

  /** The server's CPU time per request, µs; undefined without /proc. */
  get cpuMicros(): number | undefined {
    return this.cpu === undefined ? undefined : (this.cpu * 1e6) / this.requests;
  }

  /** The event loop's delay over one run: the series keeps the worst run's p99 and max. */
  addLoopDelay({ p99, max }: LoopDelay): void {
    this.loopDelay = { p99: Math.max(p99, this.loopDelay?.p99 ?? 0), max: Math.max(max, this.loopDelay?.max ?? 0) };
  }

  loopNote(): string {
    return this.loopDelay ? `; event loop delay p99 ${this.loopDelay.p99.toFixed(1)} ms, max ${this.loopDelay.max.toFixed(1)} ms` : '';
  }

  /** The PostgreSQL and Redis servers' CPU per request, µs (0 where the run used neither). */
  get backingMicros(): BackingCpu {
    return { postgres: (this.backing.postgres * 1e6) / this.requests, redis: (this.backing.redis * 1e6) / this.requests };
  }

  /** The server's CPU per request, its backing servers', the event loop's delay, and the timeouts, for the row's note. */
  note(): string {
    const cpu = this.cpuMicros === undefined ? '' : `; server CPU ${this.cpuMicros.toFixed(0)} µs/request`;
    const { postgres, redis } = this.backingMicros;
    const backing = postgres + redis > 0.5 ? `; PostgreSQL ${postgres.toFixed(0)} µs, Redis ${redis.toFixed(0)} µs/request` : '';
    return `${cpu}${backing}${this.loopNote()}${this.errors > 0 ? `; ${this.errors} timeouts or errors` : ''}`;
  }
}

const loader = forkChild('load.ts', [], process.env);

function load(target: Target, seconds: number): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`the load generator exited with ${code}`));
    loader.once('exit', onExit);
    loader.once('message', (result: LoadResult) => {
      loader.off('exit', onExit);
      resolve(result);
    });
    loader.send({ type: 'run', connections: CONNECTIONS, seconds, ...target } satisfies LoadRequest);
  });
}

/**
 * One run on a subject, added to its series with the server's CPU time. An answer other than 2xx
 * is a broken benchmark and throws; timeouts and connection errors are the machine's limit, and
 * the row reports them.
 */
async function runOn(subject: Subject, seconds: number, ...series: Series[]): Promise<void> {
  const backingBefore = backingSample();
  const before = cpuSeconds(subject.server.pid!);
  const result = await load(subject.target, seconds);
  const after = cpuSeconds(subject.server.pid!);
  const backing = backingSince(backingBefore);
  if (result.non2xx > 0 || result.latencies.length === 0) {
    throw new Error(`${subject.label}: not every answer was a success (${result.non2xx} answers ${result.firstBadStatus ?? ''}, ${result.errors} errors)`);
  }
  for (const one of series) one.add(result, before === undefined || after === undefined ? undefined : after - before, backing);
}

/** CPU seconds of the machine's PostgreSQL server processes and Redis server, for the "scale on paper" in RESULTS.md. */
interface BackingCpu {
  postgres: number;
  redis: number;
}

function backingSample(): { postgres: CpuSample; redis: CpuSample } {
  return { postgres: sample(processesNamed('postgres')), redis: sample(processesNamed('redis-server')) };
}

function backingSince(before: { postgres: CpuSample; redis: CpuSample }): BackingCpu {
  const now = backingSample();
  return { postgres: cpuSecondsBetween(before.postgres, now.postgres), redis: cpuSecondsBetween(before.redis, now.redis) };
}

function describe(label: string, series: Series): string {
  const cpu = series.cpuMicros === undefined ? '' : `   CPU ${series.cpuMicros.toFixed(0).padStart(5)} µs`;
  return `${label.padEnd(66)} ${series.rps.toFixed(0).padStart(6)} req/s   p50 ${series.percentile(50).toFixed(2).padStart(6)} ms   p99 ${series.percentile(99).toFixed(2).padStart(7)} ms${cpu}`;
}

/** An operation's server CPU per request against its issue-21 target, when it has one and the figures are there. */
function cpuVerdict(label: string, cpuOf: (label: string) => number | undefined): string | undefined {
  const target = CPU_TARGETS[label];
  const cpu = cpuOf(label);
  if (!target || cpu === undefined) return undefined;
  if ('atMostMicros' in target) return `${cpu.toFixed(0)} µs, target ≤ ${target.atMostMicros} µs: ${cpu <= target.atMostMicros ? 'met' : 'NOT met'}`;
  const base = cpuOf(target.of);
  if (base === undefined) return undefined;
  const ratio = cpu / base;
  return `${ratio.toFixed(2)}× the CPU of "${target.of}" (${cpu.toFixed(0)} / ${base.toFixed(0)} µs), target ≤ ${target.atMost}×: ${ratio <= target.atMost ? 'met' : 'NOT met'}`;
}

/**
 * Each operation with a CPU target against its baseline once more, in ROUNDS runs that alternate
 * between the two. The baselines' CPU per request drifts by half from one part of a run to another
 * on the machines seen (the database's state, the machine's other work); here the two sides of a
 * ratio share every stretch of time. Answers each measured label's series.
 */
async function paired(operations: Subject[]): Promise<Map<string, { operation: Series; baseline: Series }>> {
  const pairs = new Map<string, { operation: Series; baseline: Series }>();
  for (const operation of operations) {
    const target = CPU_TARGETS[operation.label];
    const baseline = target && 'of' in target ? operations.find(({ label }) => label === target.of) : undefined;
    if (!baseline) continue;
    operation.server.send({ type: 'profile', name: `${operation.label}, paired` });
    baseline.server.send({ type: 'profile', name: `${baseline.label} beside ${operation.label}` });
    for (const subject of [operation, baseline]) await runOn(subject, WARM_UP_SECONDS);
    // a baseline paired with two operations keeps the runs beside each
    const pair = { operation: new Series(), baseline: new Series() };
    for (let round = 0; round < ROUNDS; round++) {
      await runOn(operation, SECONDS / ROUNDS, pair.operation);
      await runOn(baseline, SECONDS / ROUNDS, pair.baseline);
    }
    pairs.set(operation.label, pair);
  }
  return pairs;
}

/** The year's listing, all pages of 100 one after the other by one client, WALKS times: its row. */
async function walkTheYear(call: Call, server: ChildProcess): Promise<BenchRow> {
  const yearItems = await walk(call, `/events?${YEAR_RANGE}&per_page=100`);
  server.send({ type: 'profile', name: 'GET /v1/events, a year, all pages' });
  const listing = await measureSequential(WALKS, () => walk(call, `/events?${YEAR_RANGE}&per_page=100`));
  console.log(
    `${YEAR_WALK.padEnd(66)} ${listing.rps.toFixed(0).padStart(6)} walks/s p50 ${listing.p50.toFixed(2).padStart(6)} ms   p99 ${listing.p99.toFixed(2).padStart(7)} ms`,
  );
  return row({
    operation: YEAR_WALK,
    rps: listing.rps,
    p50_ms: listing.p50,
    p99_ms: listing.p99,
    target: 'p99 < 40 ms (issue 21)',
    met: listing.p99 < 40,
    note: `${yearItems} entries in 6 requests, ${WALKS} times; req/s counts walks`,
  });
}

// ---------------------------------------------------------------- the run

const dataDir = mkdtempSync(join(tmpdir(), 'convene-bench-'));
const benchDatabase = databaseUrl ? `convene_bench_${randomBytes(6).toString('hex')}` : undefined;
const children: ChildProcess[] = [loader];

try {
  let benchDatabaseUrl: string | undefined;
  if (databaseUrl && benchDatabase) {
    await onServer(databaseUrl, `create database ${benchDatabase}`);
    const url = new URL(databaseUrl);
    url.pathname = `/${benchDatabase}`;
    benchDatabaseUrl = url.toString();
  }
  const { OIDC_ISSUER: _issuer, ...inherited } = process.env;
  const serverEnv: NodeJS.ProcessEnv = {
    ...inherited,
    ...(benchDatabaseUrl ? { DATABASE_URL: benchDatabaseUrl } : {}),
    CONVENE_HTTP__HOST: '127.0.0.1',
    CONVENE_HTTP__PORT: String(await freePort()),
    CONVENE_DATABASE__DATA_DIR: join(dataDir, 'convene'),
    CONVENE_DEV__IDENTITY_PROVIDER: 'true',
    CONVENE_LOGGING__LEVEL: 'warn',
  };
  const startConvene = async () => {
    const server = forkChild('http-server.ts', [], serverEnv);
    children.push(server);
    return { server, url: await ready(server, 'the Convene server') };
  };
  console.log('building dist/ …');
  buildConvene();
  console.log(`starting Convene (${databaseUrl ? 'PostgreSQL' : 'PGlite'}, ${redis ? 'Redis' : 'in-process store'}) …`);
  let { server, url } = await startConvene();

  // the bench user's tokens from the development identity provider, as `npm run dev-token` mints them
  const tokens = await mintDevTokens(loadConfig({ file: false, env: serverEnv }), { name: 'bench', lifetimeSeconds: 3600 });
  const loginBody = JSON.stringify({ id_token: tokens.id_token });
  const login = await fetch(`${url}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: loginBody });
  if (login.status !== 200) throw new Error(`the bench user's login answered ${login.status}: ${await login.text()}`);
  const call = jsonCaller(url, tokens.access_token);
  const { json: me } = await call('GET', '/users/me');
  const { json: room } = await call('POST', '/rooms', { enable_sip: false });
  let dailyId = '';
  const eventCount = benchEventCount();
  const seedStarted = Date.now();
  if (withEvents) {
    console.log("seeding the events benchmark's data …");
    ({ dailyId } = await seedEvents(call));
  }
  // stopped: the baselines' copies of PGlite's directory (and the bulk seeding) need it to themselves
  if (!databaseUrl) await stop(server);
  if (withEvents) {
    await withDatabase(benchDatabaseUrl, join(dataDir, 'convene', 'pglite'), (run) => seedMoreEvents(run, me.id, eventCount));
    console.log(`seeded ${eventCount} events in ${((Date.now() - seedStarted) / 1000).toFixed(1)} s`);
  }

  // the baselines' data: the same database, or a copy of PGlite's directory each, made while Convene is stopped
  const baselineData = (name: string) => {
    if (databaseUrl) return dataDir;
    cpSync(join(dataDir, 'convene'), join(dataDir, name), { recursive: true });
    return join(dataDir, name);
  };
  const [plainDir, namedDir] = [baselineData('plain'), baselineData('named')];
  if (!databaseUrl) ({ server, url } = await startConvene());
  const baselineEnv = { ...process.env, ...(benchDatabaseUrl ? { DATABASE_URL: benchDatabaseUrl } : {}) };
  const plainServer = forkChild('baseline-http.ts', [plainDir, me.id], baselineEnv);
  const namedServer = forkChild('baseline-http.ts', [namedDir, me.id, '--named'], baselineEnv);
  const { json: tariff } = await call('GET', '/users/me/tariff');
  const jsonServer = forkChild('baseline-json.ts', [JSON.stringify(tariff)], process.env);
  children.push(plainServer, namedServer, jsonServer);
  const [plainUrl, namedUrl, jsonUrl] = await Promise.all([
    ready(plainServer, 'the baseline server'),
    ready(namedServer, 'the named-statement baseline'),
    ready(jsonServer, 'the JSON baseline'),
  ]);
  const baseline: Subject = { label: BASELINE, server: plainServer, target: { url: `${plainUrl}/rooms/${room.id}`, method: 'GET', headers: {} } };
  await runOn(baseline, WARM_UP_SECONDS);
  console.log('');

  const bearer = { authorization: `Bearer ${tokens.access_token}` };
  const json = { 'content-type': 'application/json' };
  const get = (path: string): Target => ({ url: `${url}/v1${path}`, method: 'GET', headers: bearer });
  const post = (path: string, headers: Record<string, string>, body: string): Target => ({ url: `${url}/v1${path}`, method: 'POST', headers, body });
  const operations: (Subject & { singleQuery?: true; note: string })[] = [
    { label: 'GET /v1/rooms/{id}', server, target: get(`/rooms/${room.id}`), singleQuery: true, note: "one query: the room and the caller's invite role" },
    { label: 'GET /v1/users/me', server, target: get('/users/me'), singleQuery: true, note: 'one query: the storage used' },
    { label: 'GET /v1/users/me/tariff', server, target: get('/users/me/tariff'), note: 'no query: the HTTP stack and the token check alone' },
    {
      label: 'POST /v1/rooms/{id}/start',
      server,
      target: post(`/rooms/${room.id}/start`, { ...bearer, ...json }, '{}'),
      note: `one query and a ticket into the ${redis ? 'Redis' : 'in-process'} signaling store`,
    },
    { label: 'POST /v1/auth/login', server, target: post('/auth/login', json, loginBody), note: "an ID token's signature check and the user's upsert" },
    { label: YEAR_PAGE, server, target: get(`/events?${YEAR_RANGE}`), note: "the events benchmark's user" },
    { label: INSTANCES_PAGE, server, target: get(`/events/${dailyId}/instances`), note: 'a daily series over 10 years' },
    {
      label: NAMED_BASELINE,
      server: namedServer,
      target: { url: `${namedUrl}/rooms/${room.id}`, method: 'GET', headers: {} },
      note: 'the baseline with the query as a named statement, as Convene prepares it: the bare limit',
    },
    {
      label: JSON_BASELINE,
      server: jsonServer,
      target: { url: `${jsonUrl}/tariff`, method: 'GET', headers: {} },
      note: "the tariff's answer serialised per request, no query: the bare limit of a request without one",
    },
  ];
  const isBaseline = (label: string) => label === NAMED_BASELINE || label === JSON_BASELINE;

  const allBaseline = new Series();
  const measured: { operation: (typeof operations)[number]; series: Series; ratio: number }[] = [];
  const chosen = operations.filter(({ label }) => selected(label) || isBaseline(label));
  // every operation once before any is measured: V8 compiles the code all of them share (Express,
  // routing, validation, the driver) on threads of the server's process, whose CPU time would
  // otherwise fall into the first operation's figures
  for (const operation of chosen) await runOn(operation, WARM_UP_SECONDS);
  for (const operation of chosen) {
    operation.server.send({ type: 'profile', name: operation.label });
    await runOn(operation, WARM_UP_SECONDS);
    const series = new Series();
    const alongside = new Series();
    const convene = operation.server === server;
    for (let round = 0; round < ROUNDS; round++) {
      if (convene) await loopDelayOf(server);
      await runOn(operation, SECONDS / ROUNDS, series);
      if (convene) series.addLoopDelay(await loopDelayOf(server));
      await runOn(baseline, SECONDS / ROUNDS, alongside, allBaseline);
    }
    const ratio = series.rps / alongside.rps;
    console.log(`${describe(operation.label, series)}   ${ratio.toFixed(2)}× the baseline beside it (${alongside.rps.toFixed(0)} req/s)${series.loopNote()}`);
    measured.push({ operation, series, ratio });
  }
  console.log(describe(BASELINE, allBaseline));
  const cpuOf = (label: string) => measured.find(({ operation }) => operation.label === label)?.series.cpuMicros;
  console.log("\nserver CPU per request against issue 21's targets, each operation and baseline measured apart:");
  for (const { operation } of measured) {
    const verdict = cpuVerdict(operation.label, cpuOf);
    if (verdict) console.log(`  ${operation.label}: ${verdict}`);
  }

  console.log(`\nthe same, each operation in ${ROUNDS} runs alternating with its baseline's:`);
  const pairs = await paired(chosen);
  const pairedVerdicts = new Map<string, string>();
  for (const { operation } of measured) {
    const pair = pairs.get(operation.label);
    const verdict = pair && cpuVerdict(operation.label, (label) => (label === operation.label ? pair.operation : pair.baseline).cpuMicros);
    if (!verdict) continue;
    pairedVerdicts.set(operation.label, `alternating with its baseline, ${verdict}`);
    console.log(`  ${operation.label}: ${verdict}`);
  }

  const yearWalk = withEvents ? await walkTheYear(call, server) : undefined;
  await Promise.all([server, plainServer, namedServer, jsonServer].map(stop));

  emitRow(
    row({
      operation: BASELINE,
      rps: allBaseline.rps,
      p50_ms: allBaseline.percentile(50),
      p99_ms: allBaseline.percentile(99),
      note: `${BASELINE_NOTE}; its runs alternate with each operation's, whose ratio is to the runs beside it${allBaseline.note()}`,
    }),
  );
  // the named-statement and JSON baselines next to the baseline, the operations after them
  measured.sort((a, b) => Number(isBaseline(b.operation.label)) - Number(isBaseline(a.operation.label)));
  for (const { operation, series, ratio } of measured) {
    const p99 = series.percentile(99);
    const apart = cpuVerdict(operation.label, cpuOf);
    const verdict = [apart && `measured apart, ${apart}`, pairedVerdicts.get(operation.label)].filter(Boolean).join('; ');
    emitRow(
      row({
        operation: operation.label,
        rps: series.rps,
        p50_ms: series.percentile(50),
        p99_ms: p99,
        baseline: BASELINE,
        ratio,
        target: operation.singleQuery ? SINGLE_QUERY_TARGET : null,
        met: operation.singleQuery ? ratio >= 0.5 && p99 < 25 && series.errors === 0 : null,
        note: `${operation.note}${series.note()}${verdict ? `; ${verdict}` : ''}`,
      }),
    );
  }
  if (yearWalk) emitRow(yearWalk);
  console.log(
    `\n(${CONNECTIONS} connections; per operation ${WARM_UP_SECONDS} s of warm-up, then ${ROUNDS} runs of ${SECONDS / ROUNDS} s alternating with the baseline's;` +
      ` then each with a CPU target, ${ROUNDS} runs of ${SECONDS / ROUNDS} s alternating with its own baseline's)`,
  );
} finally {
  for (const child of children) if (child.exitCode === null) child.kill();
  rmSync(dataDir, { recursive: true, force: true });
  if (databaseUrl && benchDatabase) await onServer(databaseUrl, `drop database if exists ${benchDatabase} with (force)`);
}
