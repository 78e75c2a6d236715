/**
 * A real Janus (the Debian package's /usr/bin/janus) of a test's own, in a network namespace the
 * test creates: the machine's rules let tests send traffic only to loopback or to such namespaces,
 * and Janus never offers 127.0.0.1 as an ICE candidate. Each start makes a namespace
 * `cvj-<pid>-<n>` joined to the root namespace by a veth pair on a private /30 (10.213.x.y, chosen
 * at random among the blocks no interface holds yet), with no default route inside, so Janus can
 * reach nothing but the root side of its pair. Janus runs there with a generated configuration
 * (videoroom plugin and WebSocket transport only; `interface` and `ice_enforce_list` pin its SDP
 * and its candidates to the namespace's address) and its admin WebSocket API on, for `sessions()`,
 * `handles()` and `publishers()`.
 *
 *   if (janusUnavailable) console.warn(`… skipped: ${janusUnavailable}`);
 *   const janus = await startJanus({ sessionTimeoutS: 3 });
 *   … janus.url (ws://10.213.x.y:8188) …  await janus.sessions();  await janus.handles();  await janus.publishers();
 *   await janus.stop();  await janus.start();     // a crash (SIGKILL) and a restart on the same address
 *   await janus.freeze();  janus.thaw();          // SIGSTOP / SIGCONT: connected, but nothing answers
 *   await janus.close();                          // in afterAll: Janus, the namespace, the directory
 *
 * An exit hook kills Janus and deletes the namespace should the test process end without
 * `close()`; a namespace left by a test process that was killed outright is deleted (its Janus
 * killed) by the next start.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import WebSocket from 'ws';
import { isRunning } from './processes.js';

export interface TestJanus {
  /** `ws://<address>:8188`, the Janus WebSocket API (subprotocol `janus-protocol`). */
  readonly url: string;
  /** Janus's address: the namespace side of the veth pair. */
  readonly address: string;
  /** The root side of the veth pair, the address Janus sees its clients come from. */
  readonly peerAddress: string;
  readonly running: boolean;
  /** Kills Janus (SIGKILL, a crash); resolves once its ports are closed. The namespace stays. */
  stop(): Promise<void>;
  /** Starts Janus again in the same namespace on the same address; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Freezes Janus (SIGSTOP), resolving once every thread of it stopped: its sockets stay open, nothing answers. `thaw()` lets it go on. */
  freeze(): Promise<void>;
  thaw(): void;
  /** Kills Janus, deletes the namespace (the veth pair goes with it) and the directory. Safe to call twice. */
  close(): Promise<void>;
  /** The ids of Janus's sessions (admin `list_sessions`). */
  sessions(): Promise<number[]>;
  /** The ids of every handle of every session (admin `list_handles`). */
  handles(): Promise<number[]>;
  /** The videoroom publishers of every session (admin `handle_info`): their Janus room, feed id and display (Convene's `<participant>|<type>`). */
  publishers(): Promise<JanusPublisher[]>;
  /** What Janus wrote to standard output and error (the end of it), for failure messages. */
  log(): string;
}

export interface JanusPublisher {
  room: number;
  id: number;
  display?: string;
}

export interface JanusOptions {
  /** Janus's `session_timeout`: a session without a request for this long is dropped. Default 60. */
  sessionTimeoutS?: number;
  /**
   * Janus's `rtp_port_range`, `<first>-<last>`: each PeerConnection (bundled) takes one port, so the
   * range bounds the streams Janus carries at once. Default 20000-20100.
   */
  rtpPortRange?: string;
}

const JANUS = '/usr/bin/janus';
const LIBRARIES = '/usr/lib/x86_64-linux-gnu/janus';
const API_PORT = 8188;
const ADMIN_PORT = 7188;
const ADMIN_SECRET = 'convene-test-admin';
const READY_TIMEOUT_MS = 10_000;
const ADMIN_TIMEOUT_MS = 5_000;
const LOG_LIMIT = 64_000;

/** Why a test Janus cannot be started here (the test then skips and prints it), or undefined. */
export const janusUnavailable: string | undefined = unavailableReason();

function unavailableReason(): string | undefined {
  if (process.platform !== 'linux') return 'Janus tests need Linux network namespaces';
  if (process.getuid?.() !== 0) return 'Janus tests need root (ip netns)';
  if (!existsSync(JANUS)) return `${JANUS} is not installed (apt-get install janus)`;
  if (spawnSync('ip', ['-V']).status !== 0) return '`ip` (iproute2) is not installed';
  return undefined;
}

/**
 * Registers a Janus for the file (started before all tests, closed after all). The answer exists
 * at once and is filled in by the beforeAll; nothing is started when `janusUnavailable`.
 */
export function useJanus(options: JanusOptions = {}): TestJanus {
  const janus = {} as TestJanus;
  beforeAll(async () => {
    if (janusUnavailable) return;
    const started = await startJanus(options);
    Object.defineProperties(janus, Object.getOwnPropertyDescriptors(started));
  });
  afterAll(() => janus.close?.());
  return janus;
}

function ip(...args: string[]): void {
  const result = spawnSync('ip', args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`ip ${args.join(' ')}: ${result.stderr.trim() || `exit ${result.status}`}`);
}

function ipOutput(...args: string[]): string {
  return spawnSync('ip', args, { encoding: 'utf8' }).stdout ?? '';
}

let starts = 0;

/** A temporary directory is named after its namespace, so that a stale one can be found. */
const DIR_PREFIX = 'convene-janus-';

/**
 * What a test process killed outright left (namespaces `cvj-<pid>-<n>` and their directories whose
 * process is gone): their Janus is killed, they are deleted.
 */
function removeStale(): void {
  const stale = (name: string) => {
    const owner = /^cvj-(\d+)-\d+$/.exec(name)?.[1];
    return owner !== undefined && !isRunning(Number(owner));
  };
  for (const ns of ipOutput('netns', 'list')
    .split('\n')
    .map((line) => line.split(' ')[0] ?? '')) {
    if (!stale(ns)) continue;
    for (const pid of ipOutput('netns', 'pids', ns).split('\n').filter(Boolean)) process.kill(Number(pid), 'SIGKILL');
    spawnSync('ip', ['netns', 'del', ns]);
  }
  for (const dir of readdirSync(tmpdir())) {
    const ns = dir.startsWith(DIR_PREFIX) ? dir.slice(DIR_PREFIX.length, dir.lastIndexOf('-')) : '';
    if (stale(ns)) rmSync(join(tmpdir(), dir), { recursive: true, force: true });
  }
}

/** A /30 in 10.213.0.0/16 that no interface of the root namespace holds: [root side, namespace side]. */
function freeSubnet(): [string, string] {
  const taken = ipOutput('-4', '-o', 'addr', 'show');
  for (;;) {
    const block = Math.floor(Math.random() * 16_384);
    const prefix = `10.213.${block >> 6}.`;
    const base = (block & 63) * 4;
    if (!taken.includes(` ${prefix}${base + 1}/`)) return [prefix + (base + 1), prefix + (base + 2)];
  }
}

/** The namespace with its veth pair up and addressed, no default route. */
function createNamespace(ns: string, rootVeth: string, nsVeth: string, rootAddress: string, address: string): void {
  ip('netns', 'add', ns);
  ip('link', 'add', rootVeth, 'type', 'veth', 'peer', 'name', nsVeth);
  ip('link', 'set', nsVeth, 'netns', ns);
  ip('addr', 'add', `${rootAddress}/30`, 'dev', rootVeth);
  ip('link', 'set', rootVeth, 'up');
  ip('-n', ns, 'addr', 'add', `${address}/30`, 'dev', nsVeth);
  ip('-n', ns, 'link', 'set', 'lo', 'up');
  ip('-n', ns, 'link', 'set', nsVeth, 'up');
}

function writeConfig(dir: string, address: string, nsVeth: string, sessionTimeoutS: number, rtpPortRange: string): void {
  const disabled = (names: string[]) => names.map((name) => `libjanus_${name}.so`).join(',');
  writeFileSync(
    join(dir, 'janus.jcfg'),
    `general: {
  configs_folder = "${dir}"
  plugins_folder = "${LIBRARIES}/plugins"
  transports_folder = "${LIBRARIES}/transports"
  events_folder = "${LIBRARIES}/events"
  loggers_folder = "${LIBRARIES}/loggers"
  debug_level = 4
  session_timeout = ${sessionTimeoutS}
  admin_secret = "${ADMIN_SECRET}"
  # without a default route Janus finds no address of its own and would write 127.0.0.1 in its SDP
  interface = "${address}"
}
media: { rtp_port_range = "${rtpPortRange}" }
nat: { nice_debug = false  ice_enforce_list = "${nsVeth}" }
plugins: { disable = "${disabled(['audiobridge', 'duktape', 'echotest', 'lua', 'nosip', 'recordplay', 'sip', 'streaming', 'textroom', 'videocall', 'voicemail'])}" }
transports: { disable = "${disabled(['http', 'mqtt', 'nanomsg', 'pfunix', 'rabbitmq'])}" }
loggers: { disable = "${disabled(['jsonlog'])}" }
events: { broadcast = false }
`,
  );
  writeFileSync(
    join(dir, 'janus.transport.websockets.jcfg'),
    `general: { json = "plain"  ws = true  ws_port = ${API_PORT}  ws_ip = "${address}"  wss = false }
admin: { admin_ws = true  admin_ws_port = ${ADMIN_PORT}  admin_ws_ip = "${address}"  admin_wss = false }
`,
  );
  writeFileSync(join(dir, 'janus.plugin.videoroom.jcfg'), 'general: { }\n');
}

/** SIGSTOP reaches the threads of a process one by one, after kill() returned: waits until each is stopped ('T'). */
async function freeze(janus: ChildProcess): Promise<void> {
  janus.kill('SIGSTOP');
  const tasks = `/proc/${janus.pid}/task`;
  const stopped = () => readdirSync(tasks).every((task) => /\) T /.test(readFileSync(`${tasks}/${task}/stat`, 'utf8')));
  while (!stopped()) await new Promise((resolve) => setTimeout(resolve, 5));
}

/** Whether a TCP connection to address:port is accepted. */
function accepts(address: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, address);
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => done(true));
  });
}

/** One admin API request on a socket of its own. */
function admin(address: string, request: Record<string, unknown>): Promise<Record<string, any>> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`ws://${address}:${ADMIN_PORT}`, 'janus-admin-protocol');
    const timer = setTimeout(() => finish(new Error(`janus admin ${String(request.janus)}: no answer within ${ADMIN_TIMEOUT_MS} ms`)), ADMIN_TIMEOUT_MS);
    const finish = (error: Error | undefined, answer?: Record<string, any>) => {
      clearTimeout(timer);
      socket.terminate();
      if (error) reject(error);
      else resolve(answer!);
    };
    socket.once('error', (error) => finish(error));
    socket.once('open', () => socket.send(JSON.stringify({ ...request, transaction: 'admin', admin_secret: ADMIN_SECRET })));
    socket.once('message', (raw) => {
      const answer = JSON.parse((raw as Buffer).toString('utf8')) as Record<string, any>;
      if (answer.janus === 'success') finish(undefined, answer);
      else finish(new Error(`janus admin ${String(request.janus)}: ${JSON.stringify(answer.error ?? answer)}`));
    });
  });
}

export async function startJanus(options: JanusOptions = {}): Promise<TestJanus> {
  if (janusUnavailable) throw new Error(janusUnavailable);
  removeStale();
  const n = ++starts;
  const ns = `cvj-${process.pid}-${n}`;
  const tag = `cvj${process.pid.toString(36)}x${n}`; // veth names: at most 15 characters
  const [rootVeth, nsVeth] = [`${tag}r`, `${tag}n`];
  const dir = mkdtempSync(join(tmpdir(), `${DIR_PREFIX}${ns}-`));
  let child: ChildProcess | undefined;
  let output = '';
  let closed = false;

  const removeAll = () => {
    if (child?.pid && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    spawnSync('ip', ['netns', 'del', ns]);
    rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', removeAll);

  let rootAddress: string;
  let address: string;
  try {
    [rootAddress, address] = freeSubnet();
    createNamespace(ns, rootVeth, nsVeth, rootAddress, address);
    writeConfig(dir, address, nsVeth, options.sessionTimeoutS ?? 60, options.rtpPortRange ?? '20000-20100');
  } catch (error) {
    process.off('exit', removeAll);
    removeAll();
    throw error;
  }

  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;

  const start = async () => {
    if (running()) throw new Error('this test Janus is already running');
    const janus = spawn('ip', ['netns', 'exec', ns, JANUS, '-C', join(dir, 'janus.jcfg'), '-F', dir, '-o'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = janus;
    const record = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-LOG_LIMIT));
    janus.stdout?.on('data', record);
    janus.stderr?.on('data', record);
    let gone: string | undefined;
    janus.once('error', (error) => (gone = error.message));
    janus.once('exit', (code, signal) => (gone = `exited (${signal ?? `code ${code}`})`));
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (!((await accepts(address, API_PORT)) && (await accepts(address, ADMIN_PORT)))) {
      if (gone !== undefined) throw new Error(`janus in ${ns} did not start: ${gone}\n${output}`);
      if (Date.now() > deadline) {
        janus.kill('SIGKILL');
        throw new Error(`janus in ${ns} did not accept connections within ${READY_TIMEOUT_MS} ms\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  /** Kills Janus and waits until its port refuses: PID 1 here reaps late, so the process may linger as a zombie. */
  const stop = async () => {
    if (!running()) return;
    child!.kill('SIGKILL');
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (await accepts(address, API_PORT)) {
      if (Date.now() > deadline) throw new Error(`janus in ${ns} still accepts connections ${READY_TIMEOUT_MS} ms after SIGKILL`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  try {
    await start();
  } catch (error) {
    process.off('exit', removeAll);
    removeAll();
    throw error;
  }

  const sessions = async () => ((await admin(address, { janus: 'list_sessions' })).sessions as number[]) ?? [];
  const handlesOf = async (session: number) => ((await admin(address, { janus: 'list_handles', session_id: session })).handles as number[]) ?? [];
  return {
    url: `ws://${address}:${API_PORT}`,
    address,
    peerAddress: rootAddress,
    get running() {
      return running();
    },
    stop,
    start,
    freeze: () => freeze(child!),
    thaw: () => void child?.kill('SIGCONT'),
    async close() {
      if (closed) return;
      closed = true;
      process.off('exit', removeAll);
      try {
        await stop();
      } finally {
        removeAll();
      }
    },
    sessions,
    async handles() {
      return (await Promise.all((await sessions()).map(handlesOf))).flat();
    },
    async publishers() {
      const infos = await Promise.all(
        (await sessions()).map(async (session) =>
          Promise.all((await handlesOf(session)).map((handle) => admin(address, { janus: 'handle_info', session_id: session, handle_id: handle }))),
        ),
      );
      return infos
        .flat()
        .map((answer) => answer.info?.plugin_specific)
        .filter((plugin) => plugin?.type === 'publisher')
        .map(({ room, id, display }) => ({ room, id, display }));
    },
    log: () => output,
  };
}
