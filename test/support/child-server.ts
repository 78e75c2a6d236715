/**
 * Convene as a real process for the fault tests (test/faults/process-*): `src/main.ts` started with
 * Node and tsx in a process of its own, configured only by the environment given here (nothing
 * inherited, so a DATABASE_URL of the test run reaches it only when a test passes it on), with the
 * test OIDC issuer of the test process as its identity provider. The child's JSON log is read for
 * its port and its shutdown, and every child is killed by `killChildren()` (call it in afterAll),
 * so a failed test leaves no process behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import WebSocket from 'ws';
import { DEFAULT_SIGNALING_PROTOCOL } from '../../packages/client/src/signaling.js';
import { emptyServerDatabase } from './database.js';
import type { TestIssuer } from './oidc-issuer.js';
import { SignalingClient } from './signaling-client.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsx = pathToFileURL(join(root, 'node_modules/tsx/dist/loader.mjs')).href;
/** Enough of the child's output to explain a failure. */
const KEPT_OUTPUT = 64 * 1024;

export interface ChildServer {
  readonly pid: number;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** Resolves with how the process ended. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The last of its stdout and stderr, for failure messages. */
  output(): string;
  /** Resolves with the first log record (of this child's life so far or to come) whose `msg` starts with `message`. */
  logged(message: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  kill(signal: NodeJS.Signals): void;
}

const children = new Set<ChildProcess>();

/**
 * The environment of a child: loopback on a port of the system's choice, info logs (the listening
 * and shutdown lines), the test issuer, and `extra` (the database, Redis …) on top.
 */
export function childEnv(cwd: string, issuer: TestIssuer, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: `${dirname(process.execPath)}:/usr/bin:/bin`,
    HOME: cwd,
    TZ: 'UTC',
    NODE_ENV: 'test',
    CONVENE_HTTP__HOST: '127.0.0.1',
    CONVENE_HTTP__PORT: '0',
    CONVENE_LOGGING__LEVEL: 'info',
    CONVENE_DATABASE__DATA_DIR: join(cwd, 'data'),
    OIDC_ISSUER: issuer.issuer,
    OIDC_CLIENT_ID: issuer.clientId,
    ...extra,
  };
}

/**
 * Starts `src/main.ts` in `cwd` and resolves once it listens. The first start on an empty PGlite data
 * directory runs initdb (5–6 s here, over 30 s on a loaded machine), hence the generous time limit.
 */
export function startChild(cwd: string, env: Record<string, string>, startTimeoutMs = 60_000): Promise<ChildServer> {
  const child = spawn(process.execPath, ['--import', tsx, join(root, 'src/main.ts')], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let output = '';
  let pending = '';
  const records: Record<string, unknown>[] = [];
  const watchers = new Set<() => void>();
  const keep = (text: string) => {
    output = (output + text).slice(-KEPT_OUTPUT);
  };
  child.stdout.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    keep(text);
    pending += text;
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) {
      try {
        records.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // not a log record (a stack trace): kept in the output only
      }
    }
    for (const wake of watchers) wake();
  });
  child.stderr.on('data', (chunk: Buffer) => keep(chunk.toString()));
  let ended = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    // 'close', not 'exit': its output has been read to the end by then
    child.once('close', (code, signal) => {
      ended = true;
      children.delete(child);
      resolve({ code, signal });
      for (const wake of watchers) wake();
    });
  });

  const logged = (message: string, timeoutMs = 10_000) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const check = () => {
        const record = records.find((r) => typeof r.msg === 'string' && r.msg.startsWith(message));
        if (record || ended) {
          clearTimeout(timer);
          watchers.delete(check);
          if (record) resolve(record);
          else reject(new Error(`the child ended before logging "${message}":\n${output}`));
        }
      };
      const timer = setTimeout(() => {
        watchers.delete(check);
        reject(new Error(`the child did not log "${message}" within ${timeoutMs} ms:\n${output}`));
      }, timeoutMs);
      watchers.add(check);
      check();
    });

  return logged('Convene listening', startTimeoutMs).then(
    (record) => {
      const port = record.port as number;
      return {
        pid: child.pid!,
        port,
        url: `http://127.0.0.1:${port}`,
        exited,
        output: () => output,
        logged,
        kill: (signal) => void child.kill(signal),
      };
    },
    (err: unknown) => {
      child.kill('SIGKILL');
      throw err;
    },
  );
}

/** SIGKILLs every child still running and waits until each is gone. For afterAll (and finally blocks). */
export async function killChildren(): Promise<void> {
  await Promise.all(
    [...children].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}

/** A fresh, empty database on the server of `url` (the child migrates it), and a way to drop it. */
export function freshServerDatabase(url: string): Promise<{ url: string; drop(): Promise<void> }> {
  return emptyServerDatabase(url, 'convene_fault');
}

export interface Answer {
  status: number;
  body: any;
}

/** A JSON request to the child (a fetch: keep-alive). Rejects only when no answer came (the child is gone). */
export async function call(child: ChildServer, method: string, path: string, options: { token?: string; body?: unknown } = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${child.url}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** Logs a user in through POST /v1/auth/login with an ID token of the test issuer; answers an access token. */
export async function loginTo(child: ChildServer, issuer: TestIssuer, name: string): Promise<string> {
  const sub = `sub-${name}`;
  const idToken = await issuer.idToken({ sub, email: `${name}@example.test`, given_name: name, family_name: 'Tester' });
  const login = await call(child, 'POST', '/v1/auth/login', { body: { id_token: idToken } });
  if (login.status !== 200) throw new Error(`login of ${name} answered ${login.status}: ${JSON.stringify(login.body)}`);
  return issuer.accessToken({ sub }, { expiresIn: 3600 });
}

/** Starts the room as the token's user on `child`, opens the socket there and joins; waits for join_success. */
export async function joinOn(child: ChildServer, token: string, roomId: string, displayName: string) {
  const start = await call(child, 'POST', `/v1/rooms/${roomId}/start`, { token, body: {} });
  if (start.status !== 200) throw new Error(`start answered ${start.status}: ${JSON.stringify(start.body)}`);
  const url = `${child.url.replace(/^http/, 'ws')}/signaling`;
  const client = new SignalingClient(new WebSocket(url, [DEFAULT_SIGNALING_PROTOCOL, `ticket#${start.body.ticket}`]));
  await client.connection.opened;
  client.command('control', 'join', { display_name: displayName });
  const joined = await client.next('control', 'join_success', 5_000);
  return Object.assign(client, { participantId: joined.payload.id, joinSuccess: joined.payload });
}

/**
 * A request on a connection of its own (no keep-alive), for probing a child that is shutting down:
 * `refused` when the connection was refused or cut before an answer, `timeout` when nothing came
 * within 5 s, else the status and body.
 */
export function probe(child: ChildServer, path: string): Promise<{ status: number | 'refused' | 'timeout'; body?: string; error?: string }> {
  return new Promise((resolve) => {
    const req = httpRequest({ host: '127.0.0.1', port: child.port, path, agent: false, timeout: 5_000 }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
      res.on('error', (err) => resolve({ status: 'refused', error: err.message }));
    });
    req.on('timeout', () => {
      resolve({ status: 'timeout' });
      req.destroy();
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ status: 'refused', error: err.code ?? err.message }));
    req.end();
  });
}
