// Media through Convene and a real Janus, with headless Chromium participants (figures, no targets):
//
// 1. Join to first decoded frame: in a fresh room, a first participant publishes its camera and
//    microphone; a second one joins (and publishes, as the web app does). From the second's `join`
//    to the first decoded video frame of the first's stream on its page (getStats polled every
//    20 ms in the page, the page's clock), with its parts: join → `subscribe` sent (join_success),
//    `subscribe` → `sdp_offer`, `sdp_offer` → first frame (ICE, DTLS, a key frame); and `publish` →
//    `sdp_answer` on both pages. BENCH_MEDIA_RUNS runs (10) after one warm-up; median and p90.
// 2. Convene's CPU per media signaling frame: while the N participants of each step of part 3
//    publish and subscribe to each other (from the first `publish` until every subscription
//    decodes), the Convene process's CPU time (process.cpuUsage over IPC: /proc's 10 ms ticks are too
//    coarse for these phases) over the frames of the `media` namespace its sockets carried (commands
//    in and events out, counted in the pages), every step pooled; beside it, the bare `ws` server of
//    the signaling benchmark (bare-ws-server.ts) relaying a frame to 2 clients, one round trip at a
//    time: its CPU per frame in or out (/proc, over 5,000 round trips).
// 3. N publishers × N subscribers, N = 2, 4, 6 …: each participant publishes its camera and
//    microphone (three simulcast layers) and subscribes to everyone else's. Over a STEADY_MS window:
//    the decoded frames per second of each subscription (median and lowest), and the CPU of Janus,
//    of Chromium (all its processes) and of Convene, from /proc over the same window, with the whole
//    machine's busy time (/proc/stat: other work on this machine included). An N is not carried
//    when its subscriptions do not all decode within NEGOTIATION_TIMEOUT_MS or their median frame
//    rate is under MIN_FPS (half the fake camera's 20); from that N the sweep goes on at a lower
//    camera size (LOW_VIDEO) until it fails again, or the time budget (BENCH_MEDIA_BUDGET_S, 300) is
//    spent.
//
// Every process runs on this machine: Janus in a network namespace of its own (test/support/janus.ts),
// Convene in a process of its own (media-server.ts), one Chromium with a browser context per
// participant and the page client of the media tests (test/support/media-page.ts), measured by
// media-probe.ts. The load average is printed at the start and end of each phase: other work on the
// machine shares its 2 cores.
//
// Needs root (network namespaces), /usr/bin/janus and /usr/bin/chromium; without them it prints why
// and one skipped row. Prints its figures and one `BENCH_ROW` line per result for `npm run bench`.
// Run: npm run bench:media. Options (environment): BENCH_MEDIA_RUNS=10, BENCH_MEDIA_SIZES=2,4,6,8,10,12,14,16,
// BENCH_MEDIA_VIDEO=640x480 (the fake camera's size in part 3), BENCH_MEDIA_LOW_VIDEO=320x240 (the size
// part 3 goes on with from the N the first did not carry), BENCH_MEDIA_BUDGET_S=300 (no new N after
// it), BENCH_CPU_PROF=<dir> (Convene writes a CPU profile there).
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import WebSocket from 'ws';
import { DEFAULT_SIGNALING_PROTOCOL } from '../../packages/client/src/signaling.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../../test/support/chromium.js';
import { janusUnavailable, startJanus, type TestJanus } from '../../test/support/janus.js';
import { installMediaClient, MEDIA_CHROMIUM_ARGS, openParticipant, publishFrom, snapshotOf, type MediaSnapshot } from '../../test/support/media-page.js';
import { emitRow, rowsOf, type BenchRow } from './bench-row.js';
import type { MediaRoom, MediaServerAnswer, MediaServerRequest } from './media-server.js';
import { installMediaProbe, probeOf, type Probe, type ProbeOptions } from './media-probe.js';
import { cpuSecondsBetween, descendantsOf, loadAverage, sample } from './proc-cpu.js';
import type { ServerReady } from './signaling-server.js';

const RUNS = Number(process.env.BENCH_MEDIA_RUNS ?? 10);
const SIZES = (process.env.BENCH_MEDIA_SIZES ?? '2,4,6,8,10,12,14,16').split(',').map(Number);
const videoOf = (text: string) => {
  const [width, height] = text.split('x').map(Number);
  return { width: width!, height: height! };
};
const VIDEO = videoOf(process.env.BENCH_MEDIA_VIDEO ?? '640x480');
/** The camera size the sweep goes on with from the N that the first size did not carry. */
const LOW_VIDEO = videoOf(process.env.BENCH_MEDIA_LOW_VIDEO ?? '320x240');
/** Half the fake camera's 20 fps: under it a call is not carried. */
const MIN_FPS = 10;
const BUDGET_MS = Number(process.env.BENCH_MEDIA_BUDGET_S ?? 300) * 1000;
/** Long enough for ICE, DTLS and the first key frames on a loaded machine. */
const NEGOTIATION_TIMEOUT_MS = 45_000;
/** Room for N × N calls up to N = 30 (N publishers and N × (N - 1) subscribers, a port each). */
const JANUS_RTP_PORTS = '20000-20999';
const SETTLE_MS = 2_000;
const STEADY_MS = 10_000;
const POLL_MS = 100;
/** Round trips through the bare ws server for its CPU per frame. */
const BARE_ROUND_TRIPS = 5_000;
const BARE_CLIENTS = 2;

const began = Date.now();
const elapsed = () => `${((Date.now() - began) / 1000).toFixed(0)} s`;

const row = rowsOf('media');

const unavailable = !existsSync(CHROMIUM) ? `${CHROMIUM} is missing (Debian's chromium package)` : janusUnavailable;
if (unavailable) {
  console.log(`media benchmark skipped: ${unavailable}`);
  emitRow(row({ operation: 'media benchmark', note: `skipped: ${unavailable}` }));
  process.exit(0);
}

/** nearest-rank percentile */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}
const ms = (value: number) => `${value.toFixed(0)} ms`;
const sleep = (duration: number) => new Promise((resolve) => setTimeout(resolve, duration));

// ---------------------------------------------------------------- processes

function nextMessage<T extends { type: string }>(child: ChildProcess, type: T['type']): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`${type}: the child process exited (${code})`));
    const onMessage = (message: T) => {
      if (message.type !== type) return;
      child.off('message', onMessage).off('exit', onExit);
      resolve(message);
    };
    child.on('message', onMessage).once('exit', onExit);
  });
}

function forkScript(script: string, args: string[], execArgv: string[] = []): ChildProcess {
  return fork(fileURLToPath(new URL(script, import.meta.url)), args, { execArgv: ['--import', 'tsx', ...execArgv] });
}

/** The processes whose CPU is told apart: Convene's, Janus's, and every other below this one (Chromium's). */
function processGroups(convenePid: number): { convene: number[]; janus: number[]; chromium: number[] } {
  const below = descendantsOf(process.pid);
  const janus = below.filter((stat) => stat.comm === 'janus').map((stat) => stat.pid);
  const convene = [convenePid, ...descendantsOf(convenePid).map((stat) => stat.pid)];
  const chromium = below.map((stat) => stat.pid).filter((pid) => !janus.includes(pid) && !convene.includes(pid));
  return { convene, janus, chromium };
}

/** The whole machine's busy and total time so far (/proc/stat's first line, in ticks), and its number of cores. */
function machineTicks(): { busy: number; total: number; cores: number } {
  const lines = readFileSync('/proc/stat', 'utf8').split('\n');
  const fields = lines[0]!.split(/\s+/).slice(1).map(Number);
  const total = fields.slice(0, 8).reduce((sum, value) => sum + value, 0);
  return { busy: total - fields[3]! - fields[4]!, total, cores: lines.filter((line) => /^cpu\d/.test(line)).length };
}

// ---------------------------------------------------------------- participants

interface Participant {
  name: string;
  page: Page;
  context: BrowserContext;
  id: string;
}

class Bench {
  constructor(
    readonly browser: Browser,
    readonly server: ChildProcess,
    readonly url: string,
  ) {}

  /** Convene's CPU time so far, µs. */
  async cpuUs(): Promise<number> {
    const answer = nextMessage<{ type: 'cpu'; cpu: NodeJS.CpuUsage }>(this.server, 'cpu');
    this.server.send({ type: 'cpu' } satisfies MediaServerRequest);
    const { cpu } = await answer;
    return cpu.user + cpu.system;
  }

  async newRoom(): Promise<MediaRoom> {
    const answer = nextMessage<MediaRoom>(this.server, 'room');
    this.server.send({ type: 'room' } satisfies MediaServerRequest);
    return answer;
  }

  /** A ticket for the room's owner (a moderator) or a guest of its invite code. */
  async ticket(room: MediaRoom, asOwner: boolean): Promise<string> {
    const path = asOwner ? `/v1/rooms/${room.roomId}/start` : `/v1/rooms/${room.roomId}/start_invited`;
    const response = await fetch(`${this.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(asOwner ? { authorization: `Bearer ${room.ownerToken}` } : {}) },
      body: JSON.stringify(asOwner ? {} : { invite_code: room.inviteCode }),
    });
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
    return ((await response.json()) as { ticket: string }).ticket;
  }

  /** A participant in a browser context of its own, its page probed, joined (its `join_success` in). */
  async join(room: MediaRoom, name: string, asOwner: boolean, probe: ProbeOptions): Promise<Participant> {
    const context = await this.browser.newContext();
    const page = await context.newPage();
    await page.goto(`${this.url}/health`); // a secure origin (loopback http) for getUserMedia
    // tsx (esbuild, keepNames) names functions through a helper `__name` that playwright does not
    // serialise with them: the page gets one that does nothing
    await page.evaluate('globalThis.__name = (target) => target');
    await page.evaluate(installMediaProbe, probe);
    await page.evaluate(installMediaClient);
    const ticket = await this.ticket(room, asOwner);
    const wsUrl = `${this.url.replace(/^http/, 'ws')}/signaling`;
    await openParticipant(page, name, wsUrl, [DEFAULT_SIGNALING_PROTOCOL, `ticket#${ticket}`], name);
    const participant = { name, page, context, id: '' };
    participant.id = (await until(participant, (snapshot) => snapshot.id !== undefined, 'join_success')).id!;
    return participant;
  }
}

/** Polls the participant's page until `check` holds; answers that snapshot. */
async function until(participant: Omit<Participant, 'id'>, check: (snapshot: MediaSnapshot) => boolean, what: string): Promise<MediaSnapshot> {
  const deadline = Date.now() + NEGOTIATION_TIMEOUT_MS;
  for (;;) {
    const snapshot = await snapshotOf(participant.page, participant.name);
    if (check(snapshot)) return snapshot;
    if (Date.now() > deadline)
      throw new Error(`${participant.name}: no ${what} within ${NEGOTIATION_TIMEOUT_MS} ms; last frames:\n${snapshot.frames.slice(-5).join('\n')}`);
    await sleep(POLL_MS);
  }
}

async function untilProbe(participant: Participant, check: (probe: Probe) => boolean, what: string): Promise<Probe> {
  const deadline = Date.now() + NEGOTIATION_TIMEOUT_MS;
  for (;;) {
    const probe = await probeOf(participant.page);
    if (check(probe)) return probe;
    if (Date.now() > deadline) throw new Error(`${participant.name}: no ${what} within ${NEGOTIATION_TIMEOUT_MS} ms`);
    await sleep(POLL_MS);
  }
}

const leave = (participants: Participant[]) => Promise.all(participants.map((participant) => participant.context.close()));

// ---------------------------------------------------------------- 1. join to first frame

interface PairTimes {
  joinToFrame: number;
  joinToSubscribe: number;
  subscribeToOffer: number;
  offerToFrame: number;
  publishToAnswer: number[];
  subscribeToOfferBack: number;
}

/** One run in a fresh room: alice publishes, bob joins, publishes, sees alice; alice is offered bob's. */
async function pairRun(bench: Bench): Promise<PairTimes> {
  const room = await bench.newRoom();
  const alice = await bench.join(room, 'alice', true, { watchDecoding: false });
  const participants = [alice];
  try {
    await publishFrom(alice.page, alice.name, 'video');
    await until(alice, (snapshot) => snapshot.published.video === true, 'publish_complete');
    const bob = await bench.join(room, 'bob', false, { watchDecoding: true });
    participants.push(bob);
    await publishFrom(bob.page, bob.name, 'video');
    const aliceStream = `${alice.id}:video`;
    const bobStream = `${bob.id}:video`;
    const atBob = await untilProbe(
      bob,
      (probe) => probe.firstDecodedAt[aliceStream] !== undefined && probe.answerAt.video !== undefined,
      'decoded frame of alice',
    );
    const atAlice = await untilProbe(alice, (probe) => probe.offerAt[bobStream] !== undefined, 'offer of bob');
    return {
      joinToFrame: atBob.firstDecodedAt[aliceStream]! - atBob.joinSentAt!,
      joinToSubscribe: atBob.subscribeSentAt[aliceStream]! - atBob.joinSentAt!,
      subscribeToOffer: atBob.offerAt[aliceStream]! - atBob.subscribeSentAt[aliceStream]!,
      offerToFrame: atBob.firstDecodedAt[aliceStream]! - atBob.offerAt[aliceStream]!,
      publishToAnswer: [atAlice, atBob].map((probe) => probe.answerAt.video! - probe.publishSentAt.video!),
      subscribeToOfferBack: atAlice.offerAt[bobStream]! - atAlice.subscribeSentAt[bobStream]!,
    };
  } finally {
    await leave(participants);
  }
}

async function joinToFirstFrame(bench: Bench): Promise<BenchRow[]> {
  console.log(`\n1. join → first decoded frame: ${RUNS} runs after a warm-up, a fresh room each (load average ${loadAverage()})`);
  await pairRun(bench);
  const runs: PairTimes[] = [];
  for (let run = 0; run < RUNS; run++) runs.push(await pairRun(bench));
  const figures: [string, number[]][] = [
    ['join → first decoded frame of the other', runs.map((r) => r.joinToFrame)],
    ['  join → subscribe sent (join_success)', runs.map((r) => r.joinToSubscribe)],
    ['  subscribe → sdp_offer', runs.map((r) => r.subscribeToOffer)],
    ['  sdp_offer → first decoded frame', runs.map((r) => r.offerToFrame)],
    ['publish → sdp_answer (both pages)', runs.flatMap((r) => r.publishToAnswer)],
    ['subscribe → sdp_offer (the first participant, to the second)', runs.map((r) => r.subscribeToOfferBack)],
  ];
  for (const [label, values] of figures)
    console.log(`  ${label}: median ${ms(percentile(values, 50))}, p90 ${ms(percentile(values, 90))} (${values.length} values)`);
  console.log(`  (load average at the end ${loadAverage()}, ${elapsed()})`);
  return figures.map(([label, values]) =>
    row({
      operation: label.trim(),
      p50_ms: percentile(values, 50),
      note: `p90 ${ms(percentile(values, 90))} of ${values.length}; the page's clock, getStats polled every 20 ms`,
    }),
  );
}

// ---------------------------------------------------------------- 2. the bare baseline

/** The bare ws server's CPU per frame (in and out), relaying one frame to BARE_CLIENTS clients per round trip. */
async function bareCostPerFrame(): Promise<number> {
  const bare = forkScript('bare-ws-server.ts', [], ['--expose-gc']);
  try {
    const { url } = await nextMessage<ServerReady>(bare, 'ready');
    const clients = await Promise.all(
      Array.from({ length: BARE_CLIENTS }, () => {
        const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/signaling`);
        return new Promise<WebSocket>((resolve, reject) => ws.once('open', () => resolve(ws)).once('error', reject));
      }),
    );
    const roundTrip = () =>
      new Promise<void>((resolve) => {
        let waiting = clients.length;
        for (const ws of clients) ws.once('message', () => --waiting === 0 && resolve());
        clients[0]!.send(JSON.stringify({ namespace: 'timer', payload: { action: 'start', kind: 'stopwatch', enable_ready_check: false } }));
      });
    for (let i = 0; i < 100; i++) await roundTrip(); // warm-up
    const before = sample([bare.pid!]);
    for (let i = 0; i < BARE_ROUND_TRIPS; i++) await roundTrip();
    const seconds = cpuSecondsBetween(before, sample([bare.pid!]));
    for (const ws of clients) ws.close();
    return (seconds * 1e6) / (BARE_ROUND_TRIPS * (1 + BARE_CLIENTS));
  } finally {
    bare.send({ type: 'close' });
  }
}

// ---------------------------------------------------------------- 3. N × N

interface StepResult {
  n: number;
  negotiationMs: number;
  mediaFrames: number;
  otherFrames: number;
  conveneNegotiationCpuUs: number;
  /**
   * What Convene spends with the calls running and hardly a frame (its steady-window rate), over the
   * negotiation's duration: part of conveneNegotiationCpuUs that the frames did not cause, which
   * weighs when a negotiation takes tens of seconds on a loaded machine.
   */
  conveneBackgroundUs: number;
  /** Media frames in the steady window (its background's frames). */
  steadyMediaFrames: number;
  fpsMedian: number;
  fpsLowest: number;
  /** Subscriptions that decoded under 1 fps in the window, with their video kbit/s (0: Janus sent them nothing). */
  stalled: string[];
  videoKbps: number;
  cpu: { janus: number; chromium: number; convene: number; machine: number };
}

const framesOfAll = async (participants: Participant[]) => {
  const probes = await Promise.all(participants.map((participant) => probeOf(participant.page)));
  return probes.reduce((sum, { frames }) => ({ media: sum.media + frames.mediaIn + frames.mediaOut, other: sum.other + frames.otherIn + frames.otherOut }), {
    media: 0,
    other: 0,
  });
};

/** Decoded video frames and received video bytes of every camera subscription, by `<participant>/<stream>`. */
async function decodedOfAll(participants: Participant[]): Promise<Map<string, { frames: number; bytes: number }>> {
  const snapshots = await Promise.all(participants.map((participant) => snapshotOf(participant.page, participant.name)));
  return new Map(
    snapshots.flatMap((snapshot, i) =>
      Object.entries(snapshot.inbound)
        .filter(([stream]) => stream.endsWith(':video'))
        .map(([stream, { framesDecoded, videoBytes }]) => [`${participants[i]!.name}/${stream}`, { frames: framesDecoded, bytes: videoBytes }] as const),
    ),
  );
}

async function step(bench: Bench, n: number, video: { width: number; height: number }): Promise<StepResult | string> {
  const room = await bench.newRoom();
  const participants: Participant[] = [];
  try {
    for (let i = 0; i < n; i++) participants.push(await bench.join(room, `p${i}`, i === 0, { watchDecoding: false, video }));
    const convenePid = bench.server.pid!;
    const [framesBefore, conveneBefore, negotiationStart] = [await framesOfAll(participants), await bench.cpuUs(), Date.now()];
    await Promise.all(participants.map((participant) => publishFrom(participant.page, participant.name, 'video')));
    const expected = (participant: Participant) => participants.filter((other) => other !== participant).map((other) => `${other.id}:video`);
    try {
      await Promise.all(
        participants.map((participant) =>
          until(
            participant,
            (snapshot) => expected(participant).every((stream) => (snapshot.inbound[stream]?.framesDecoded ?? 0) > 0),
            'decoded frame of everyone',
          ),
        ),
      );
    } catch (error) {
      return (error as Error).message.split('\n')[0]!;
    }
    const negotiationMs = Date.now() - negotiationStart;
    const framesAfter = await framesOfAll(participants);
    const conveneNegotiationCpuUs = (await bench.cpuUs()) - conveneBefore;

    await sleep(SETTLE_MS);
    const groups = processGroups(convenePid);
    const all = [...groups.convene, ...groups.janus, ...groups.chromium];
    const steadyFramesBefore = await framesOfAll(participants);
    const [decodedBefore, cpuBefore, machineBefore, windowStart] = [await decodedOfAll(participants), sample(all), machineTicks(), performance.now()];
    await sleep(STEADY_MS);
    const [decodedAfter, cpuAfter, machineAfter] = [await decodedOfAll(participants), sample(all), machineTicks()];
    const seconds = (performance.now() - windowStart) / 1000;
    const steadyFramesAfter = await framesOfAll(participants);
    const rates = [...decodedAfter].map(([key, after]) => {
      const before = decodedBefore.get(key) ?? { frames: 0, bytes: 0 };
      return { key, fps: (after.frames - before.frames) / seconds, kbps: ((after.bytes - before.bytes) * 8) / 1000 / seconds };
    });
    const fps = rates.map((rate) => rate.fps);
    const percentOf = (pids: number[]) => {
      const pick = (cpuSample: Map<number, number>) => new Map([...cpuSample].filter(([pid]) => pids.includes(pid)));
      return (cpuSecondsBetween(pick(cpuBefore), pick(cpuAfter)) / seconds) * 100;
    };
    const machine = machineAfter.total - machineBefore.total;
    const conveneRate = percentOf(groups.convene) / 100;
    return {
      n,
      negotiationMs,
      mediaFrames: framesAfter.media - framesBefore.media,
      otherFrames: framesAfter.other - framesBefore.other,
      conveneNegotiationCpuUs,
      conveneBackgroundUs: conveneRate * negotiationMs * 1000,
      steadyMediaFrames: steadyFramesAfter.media - steadyFramesBefore.media,
      fpsMedian: percentile(fps, 50),
      fpsLowest: Math.min(...fps),
      stalled: rates.filter((rate) => rate.fps < 1).map((rate) => `${rate.key} (${rate.kbps.toFixed(0)} kbit/s)`),
      videoKbps: percentile(
        rates.map((rate) => rate.kbps),
        50,
      ),
      cpu: {
        janus: percentOf(groups.janus),
        chromium: percentOf(groups.chromium),
        convene: conveneRate * 100,
        // /proc/stat counts every core's ticks: busy share of the machine, as a percentage of one core
        machine: machine > 0 ? ((machineAfter.busy - machineBefore.busy) / machine) * 100 * machineAfter.cores : NaN,
      },
    };
  } finally {
    await leave(participants);
  }
}

type Video = { width: number; height: number };
const sizeOf = (video: Video) => `${video.width}x${video.height}`;

interface Negotiation {
  cpuUs: number;
  backgroundUs: number;
  mediaFrames: number;
}
const noNegotiation: Negotiation = { cpuUs: 0, backgroundUs: 0, mediaFrames: 0 };
const addNegotiation = (a: Negotiation, b: Negotiation): Negotiation => ({
  cpuUs: a.cpuUs + b.cpuUs,
  backgroundUs: a.backgroundUs + b.backgroundUs,
  mediaFrames: a.mediaFrames + b.mediaFrames,
});

/** Where a sweep stopped, and the N it could not carry (undefined: it ran out of sizes or time). */
interface Sweep {
  rows: BenchRow[];
  limit: string;
  failedAt?: number;
  /** Convene's CPU (and its background part) and the media frames over every step's negotiation, pooled. */
  negotiation: Negotiation;
}

/** N × N calls for each size of `ns` in turn at the camera size `video`, until one is not carried. */
async function sweep(bench: Bench, ns: number[], video: Video, bareUs: number): Promise<Sweep> {
  console.log(`\n  fake camera ${sizeOf(video)}:`);
  const result: Sweep = { rows: [], limit: `the sizes given (${ns.join(', ')}) all carried`, negotiation: noNegotiation };
  for (const n of ns) {
    if (Date.now() - began > BUDGET_MS) return { ...result, limit: `the time budget (${BUDGET_MS / 1000} s) was spent before N=${n}` };
    const loadBefore = loadAverage();
    const outcome = await step(bench, n, video);
    const loads = `load average ${loadBefore} → ${loadAverage()}`;
    const operation = `N=${n}, ${sizeOf(video)}`;
    if (typeof outcome === 'string') {
      console.log(`  N=${n}: not every subscription decoded: ${outcome} (${loads}, ${elapsed()})`);
      result.rows.push(
        row({ operation: `${operation}: not carried`, note: `not every subscription decoded within ${NEGOTIATION_TIMEOUT_MS / 1000} s; ${loads}` }),
      );
      return { ...result, limit: `N=${n} at ${sizeOf(video)}: not every subscription decoded within ${NEGOTIATION_TIMEOUT_MS / 1000} s`, failedAt: n };
    }
    const { cpu } = outcome;
    result.negotiation = addNegotiation(result.negotiation, {
      cpuUs: outcome.conveneNegotiationCpuUs,
      backgroundUs: outcome.conveneBackgroundUs,
      mediaFrames: outcome.mediaFrames,
    });
    const perFrameUs = outcome.conveneNegotiationCpuUs / outcome.mediaFrames;
    const cpuText = `Janus ${cpu.janus.toFixed(0)}%, Chromium ${cpu.chromium.toFixed(0)}%, Convene ${cpu.convene.toFixed(1)}%, machine busy ${cpu.machine.toFixed(0)}%`;
    const stalled = outcome.stalled.length > 0 ? `; under 1 fps: ${outcome.stalled.join(', ')}` : '';
    console.log(
      `  N=${n}: ${n * (n - 1)} subscriptions decoding ${outcome.negotiationMs} ms after the publishes; decoded fps per subscription median ` +
        `${outcome.fpsMedian.toFixed(1)}, lowest ${outcome.fpsLowest.toFixed(1)} (median ${outcome.videoKbps.toFixed(0)} kbit/s of video)${stalled}; CPU ${cpuText}; ` +
        `negotiation: ${outcome.mediaFrames} media frames (+${outcome.otherFrames} others), Convene ${(outcome.conveneNegotiationCpuUs / 1000).toFixed(0)} ms CPU = ` +
        `${perFrameUs.toFixed(0)} µs per media frame (${(perFrameUs / bareUs).toFixed(1)}× bare ws's), ` +
        `${((outcome.conveneNegotiationCpuUs - outcome.conveneBackgroundUs) / outcome.mediaFrames).toFixed(0)} µs net of its background ` +
        `(${outcome.steadyMediaFrames} media frames in the steady window); ${loads}, ${elapsed()}`,
    );
    result.rows.push(
      row({
        operation: `${operation}: decoded fps per subscription`,
        note: `median ${outcome.fpsMedian.toFixed(1)} fps, lowest ${outcome.fpsLowest.toFixed(1)}${stalled}; CPU over ${STEADY_MS / 1000} s: ${cpuText}; ${loads}`,
      }),
    );
    if (outcome.fpsMedian < MIN_FPS) {
      return {
        ...result,
        limit: `N=${n} at ${sizeOf(video)}: the median decoded frame rate ${outcome.fpsMedian.toFixed(1)} fps, under ${MIN_FPS}`,
        failedAt: n,
      };
    }
  }
  return result;
}

/** Sweeps at the camera size asked for, then from the N it could not carry on at LOW_VIDEO. */
async function sizes(bench: Bench, bareUs: number): Promise<BenchRow[]> {
  console.log(
    `\n2./3. N publishers × N subscribers (three simulcast layers each), ${STEADY_MS / 1000} s windows; CPU in % of one core ` +
      `(the machine has ${availableParallelism()}: ${availableParallelism() * 100}%); stops under ${MIN_FPS} decoded fps (the fake camera sends 20) or when a call does not connect (load average ${loadAverage()})`,
  );
  const first = await sweep(bench, SIZES, VIDEO, bareUs);
  const sweeps = [first];
  if (first.failedAt !== undefined && sizeOf(VIDEO) !== sizeOf(LOW_VIDEO)) {
    sweeps.push(await sweep(bench, SIZES.slice(SIZES.indexOf(first.failedAt)), LOW_VIDEO, bareUs));
  }
  for (const { limit } of sweeps) console.log(`  stopped: ${limit}`);
  const pooled = sweeps.map(({ negotiation }) => negotiation).reduce(addNegotiation, noNegotiation);
  const perFrameUs = pooled.cpuUs / pooled.mediaFrames;
  const netUs = (pooled.cpuUs - pooled.backgroundUs) / pooled.mediaFrames;
  console.log(
    `  Convene CPU per media signaling frame, every step's negotiation pooled: ${perFrameUs.toFixed(0)} µs ` +
      `(${(pooled.cpuUs / 1000).toFixed(0)} ms over ${pooled.mediaFrames} frames), ${(perFrameUs / bareUs).toFixed(1)}× the bare ws relay's ${bareUs.toFixed(1)} µs; ` +
      `net of Convene's background over the negotiations (${(pooled.backgroundUs / 1000).toFixed(0)} ms): ${netUs.toFixed(0)} µs, ${(netUs / bareUs).toFixed(1)}× (load average ${loadAverage()})`,
  );
  return [
    row({
      operation: 'Convene CPU per media signaling frame (µs)',
      baseline: 'bare ws relay, CPU per frame (µs)',
      ratio: perFrameUs / bareUs,
      note:
        `${perFrameUs.toFixed(0)} µs: ${(pooled.cpuUs / 1000).toFixed(0)} ms over ${pooled.mediaFrames} media frames in and out while the N × N calls negotiated ` +
        `(with Convene's Janus traffic for them); net of its background (its rate with the calls running) ${netUs.toFixed(0)} µs, ${(netUs / bareUs).toFixed(1)}×`,
    }),
    ...sweeps.flatMap(({ rows }) => rows),
    ...sweeps.map(({ limit }) => row({ operation: 'N × N: where it stopped', note: limit })),
  ];
}

// ---------------------------------------------------------------- the run

console.log(`media benchmark: Janus in a network namespace, Convene in a process of its own, one headless Chromium (load average ${loadAverage()})`);
let janus: TestJanus | undefined;
let server: ChildProcess | undefined;
let browser: Browser | undefined;
try {
  // a PeerConnection takes a port of Janus's: the tests' 101 would end the sweep at N=10 (10 + 90)
  janus = await startJanus({ rtpPortRange: JANUS_RTP_PORTS });
  // BENCH_CPU_PROF=<dir>: Convene writes a CPU profile there when it stops (as the other benchmarks' servers do)
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  server = forkScript('media-server.ts', [janus.url], profile);
  const { url } = await nextMessage<Extract<MediaServerAnswer, { type: 'ready' }>>(server, 'ready');
  browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, ...MEDIA_CHROMIUM_ARGS] });
  const bench = new Bench(browser, server, url);
  const rows = await joinToFirstFrame(bench);
  console.log(`\nbare ws relay (bare-ws-server.ts, ${BARE_CLIENTS} clients, ${BARE_ROUND_TRIPS} round trips one at a time; load average ${loadAverage()}) …`);
  const bareUs = await bareCostPerFrame();
  console.log(`  ${bareUs.toFixed(1)} µs of server CPU per frame in or out (load average ${loadAverage()})`);
  rows.push(
    row({
      operation: 'bare ws relay, CPU per frame (µs)',
      note: `${bareUs.toFixed(1)} µs: a small frame in, relayed to ${BARE_CLIENTS} clients, one round trip at a time`,
    }),
  );
  rows.push(...(await sizes(bench, bareUs)));
  for (const result of rows) emitRow(result);
  console.log(`\nload average at the end ${loadAverage()}; ${elapsed()}`);
} finally {
  await browser?.close();
  server?.send({ type: 'close' } satisfies MediaServerRequest);
  await janus?.close();
}
