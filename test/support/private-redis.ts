/**
 * A Redis server of a test's own, for fault tests that stop and start it: `redis-server` on a free
 * loopback port with persistence off (`--save '' --appendonly no`, its working directory a
 * temporary one), `stop('SIGKILL' | 'SIGTERM')` and `start()` on the same port at will,
 * `destroy()` at the end. It never touches the machine's server on 6379.
 *
 *   const reason = privateRedisUnavailable();   // undefined, or why the test must skip
 *   const redis = await startPrivateRedis();
 *   … redis.url …  await redis.stop();  await redis.start();   // a restart forgets every key
 *   await redis.dropClients();                    // cut every connection; the server and its keys stay
 *   await redis.command('PUBSUB', 'NUMSUB', channel);
 *   await redis.destroy();                        // in afterAll, also after a failure
 *
 * The binary is `REDIS_SERVER` or `redis-server` from the PATH. The server is a child of the test
 * process; an exit hook kills it should the process end without `destroy()`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './private-postgres.js';

export interface PrivateRedis {
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  readonly running: boolean;
  /** Stops the server: SIGKILL as a crash (connections reset), SIGTERM as a shutdown. Keys are lost either way. */
  stop(signal?: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  /** Starts it again on the same port (empty); resolves once it answers PING. */
  start(): Promise<void>;
  /** Stops the server if it runs and removes its directory. Safe to call twice. */
  destroy(): Promise<void>;
  /** Sends one command on a connection of its own and returns the reply (integers as numbers, arrays as arrays). */
  command(...args: string[]): Promise<RedisReply>;
  /**
   * Cuts every client's connection (CLIENT KILL), as a network failure would, while the server and
   * its keys stay: returns how many were cut.
   */
  dropClients(): Promise<number>;
  /** Freezes the server (SIGSTOP): connections stay open, nothing answers. `thaw()` lets it go on. */
  freeze(): void;
  thaw(): void;
}

export type RedisReply = string | number | null | RedisReply[];

const READY_TIMEOUT_MS = 10_000;

/** The server binary: `REDIS_SERVER` (a path), else `redis-server` from the PATH. */
const serverBinary = () => process.env.REDIS_SERVER || 'redis-server';

/** Undefined when a private server can be started here, else why not (the test then skips). */
export function privateRedisUnavailable(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v "$0"', serverBinary()], { encoding: 'utf8' });
  return found.status === 0 ? undefined : `${serverBinary()} is not installed (set REDIS_SERVER or put redis-server on the PATH)`;
}

/** Parses one RESP reply at `at`; undefined while it is incomplete. */
function parseReply(buffer: string, at = 0): { value: RedisReply; end: number } | undefined {
  const lineEnd = buffer.indexOf('\r\n', at);
  if (lineEnd < 0) return undefined;
  const kind = buffer[at];
  const line = buffer.slice(at + 1, lineEnd);
  const next = lineEnd + 2;
  if (kind === '+') return { value: line, end: next };
  if (kind === '-') throw new Error(`redis: ${line}`);
  if (kind === ':') return { value: Number(line), end: next };
  if (kind === '$') {
    const length = Number(line);
    if (length < 0) return { value: null, end: next };
    return buffer.length < next + length + 2 ? undefined : { value: buffer.slice(next, next + length), end: next + length + 2 };
  }
  if (kind === '*') {
    const values: RedisReply[] = [];
    let end = next;
    for (let i = 0; i < Number(line); i++) {
      const item = parseReply(buffer, end);
      if (!item) return undefined;
      values.push(item.value);
      end = item.end;
    }
    return { value: values, end };
  }
  throw new Error(`redis: unexpected reply ${JSON.stringify(buffer.slice(at, at + 50))}`);
}

/** One command on a connection of its own (keys and arguments in ASCII). */
function sendCommand(port: number, args: string[]): Promise<RedisReply> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let buffer = '';
    socket.setTimeout(5_000, () => socket.destroy(new Error(`redis ${args[0]}: no reply within 5 s`)));
    socket.once('error', reject);
    socket.once('connect', () => socket.write(`*${args.length}\r\n${args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join('')}`));
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('latin1');
      try {
        const reply = parseReply(buffer);
        if (!reply) return;
        socket.end();
        resolve(reply.value);
      } catch (err) {
        socket.destroy();
        reject(err);
      }
    });
  });
}

/** Whether the server on `port` answers PING with PONG. */
function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString('latin1');
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'convene-redis-'));
  let child: ChildProcess | undefined;
  let destroyed = false;
  const onExit = () => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', onExit);

  let port = 0;
  const start = async () => {
    const args = [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      '--daemonize',
      'no',
      '--loglevel',
      'warning',
    ];
    const server = spawn(serverBinary(), args, { stdio: ['ignore', 'ignore', 'pipe'] });
    child = server;
    let stderr = '';
    server.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<string>((resolve) => {
      server.once('error', (err) => resolve(err.message));
      server.once('exit', (code, signal) => resolve(`exited (${signal ?? `code ${code}`}) ${stderr.trim()}`));
    });
    const deadline = Date.now() + READY_TIMEOUT_MS;
    let gone: string | undefined;
    void exited.then((why) => (gone = why));
    while (!(await answersPing(port))) {
      if (gone !== undefined) throw new Error(`redis-server on port ${port} did not start: ${gone}`);
      if (Date.now() > deadline) {
        server.kill('SIGKILL');
        throw new Error(`redis-server on port ${port} did not answer PING within ${READY_TIMEOUT_MS} ms`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // a ping may have reached another server on a port taken meanwhile: ours must still run
    if (gone !== undefined) throw new Error(`redis-server on port ${port} did not start: ${gone}`);
  };

  const stopChild = async (signal: NodeJS.Signals) => {
    const server = child;
    if (!server || server.exitCode !== null || server.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
    server.kill(signal);
    await exited;
  };

  try {
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      try {
        await start();
        break;
      } catch (err) {
        if (attempt === 2) throw err;
      }
    }
  } catch (err) {
    process.off('exit', onExit);
    onExit();
    throw err;
  }

  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    get running() {
      return child !== undefined && child.exitCode === null && child.signalCode === null;
    },
    stop: (signal = 'SIGKILL') => stopChild(signal),
    start,
    command: (...args) => sendCommand(port, args),
    async dropClients() {
      // subscribers and the rest alike; SKIPME (the default) spares the connection sending the kill
      const normal = await sendCommand(port, ['CLIENT', 'KILL', 'TYPE', 'normal']);
      const pubsub = await sendCommand(port, ['CLIENT', 'KILL', 'TYPE', 'pubsub']);
      return Number(normal) + Number(pubsub);
    },
    freeze() {
      child?.kill('SIGSTOP');
    },
    thaw() {
      child?.kill('SIGCONT');
    },
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      process.off('exit', onExit);
      try {
        await stopChild('SIGKILL');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
