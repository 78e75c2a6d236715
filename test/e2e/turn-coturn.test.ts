/**
 * TURN credentials from `GET /v1/turn` accepted by a real TURN server: coturn on loopback with
 * `use-auth-secret` (the TURN REST API), a UDP echo peer (`turnutils_peer`), and allocations plus
 * relayed traffic by `turnutils_uclient` over UDP and TCP. Wrong, foreign and expired credentials
 * must fail to allocate.
 *
 * coturn comes from Debian's `coturn` package; when it is missing the test installs it if it runs as
 * root and apt works, and otherwise skips with the reason printed.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { components } from '../../generated/openapi.js';
import { turnCredentials } from '../../src/domain/turn/turn-credentials.js';
import { insertInvite, insertRoom, jsonRequest } from '../support/invites.js';
import { startTestApp, type TestApp, type TestUser } from '../support/test-app.js';

type TurnServer = components['schemas']['TurnServer'];

const TOOLS = ['turnserver', 'turnutils_uclient', 'turnutils_peer'];
const have = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;

/** Undefined when coturn is usable, else why not. */
function ensureCoturn(): string | undefined {
  if (TOOLS.every(have)) return undefined;
  if (process.getuid?.() !== 0) return 'coturn is not installed and the test does not run as root to install it';
  const install = spawnSync('sh', ['-c', 'apt-get install -y coturn || { apt-get update && apt-get install -y coturn; }'], {
    timeout: 240_000,
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    encoding: 'utf8',
  });
  if (TOOLS.every(have)) return undefined;
  const detail =
    install.error?.message ??
    String(install.stderr ?? '')
      .trim()
      .split('\n')
      .slice(-2)
      .join(' ');
  return `coturn could not be installed with apt-get (${detail || `exit ${install.status}`})`;
}

const unavailable = ensureCoturn();
if (unavailable) console.warn(`test/e2e/turn-coturn.test.ts skipped: ${unavailable}`);

const SECRET = randomBytes(18).toString('base64url');
const LIFETIME = 600;
const MESSAGES = 10;
/** turnutils_uclient's client holds an RTP/RTCP pair of allocations and sends the messages on each. */
const SENT = 2 * MESSAGES;

let workDir: string;
let turnPort: number;
let peerPort: number;
const children: ChildProcess[] = [];
let app: TestApp;
let user: TestUser;

/** A loopback port free for TCP and UDP alike (coturn binds both; toolchain gotcha 28). */
async function freeTcpUdpPort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const tcp = createServer();
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
    const { port } = tcp.address() as { port: number };
    const udp = createSocket('udp4');
    const udpFree = await new Promise<boolean>((resolve) => {
      udp.once('error', () => resolve(false));
      udp.bind(port, '127.0.0.1', () => resolve(true));
    });
    if (udpFree) await new Promise<void>((resolve) => udp.close(() => resolve()));
    await new Promise<void>((resolve) => tcp.close(() => resolve()));
    if (udpFree) return port;
  }
  throw new Error('no port free for both TCP and UDP');
}

async function waitForTcp(port: number, deadlineMs: number): Promise<void> {
  while (Date.now() < deadlineMs) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const log = (() => {
    try {
      return readFileSync(join(workDir, 'turn.log'), 'utf8').slice(-2000);
    } catch {
      return '(no log)';
    }
  })();
  throw new Error(`turnserver did not listen on ${port}:\n${log}`);
}

function start(command: string, args: string[]): ChildProcess {
  const child = spawn(command, args, { stdio: 'ignore' });
  children.push(child);
  return child;
}

interface Allocation {
  exitCode: number | null;
  output: string;
  sent: number;
  received: number;
}

/** One turnutils_uclient run: allocate with the credentials, relay the messages to the peer and back. */
function allocate(username: string, password: string, transport: 'udp' | 'tcp'): Promise<Allocation> {
  const args = ['-u', username, '-w', password, '-p', String(turnPort), '-e', '127.0.0.1', '-r', String(peerPort)];
  args.push('-n', String(MESSAGES), '-m', '1', '-l', '120', ...(transport === 'tcp' ? ['-t'] : []), '127.0.0.1');
  return new Promise((resolve, reject) => {
    const child = spawn('turnutils_uclient', args);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('error', reject);
    child.once('close', (exitCode) => {
      clearTimeout(timer);
      const totals = /tot_send_msgs=(\d+), tot_recv_msgs=(\d+)\s*$/m.exec(output);
      resolve({ exitCode, output, sent: Number(totals?.[1] ?? 0), received: Number(totals?.[2] ?? 0) });
    });
  });
}

function expectRelayed(result: Allocation): void {
  expect(result.output).not.toContain('Cannot complete Allocation');
  expect(result.exitCode, result.output).toBe(0);
  expect(result.sent).toBe(SENT);
  // loopback UDP does not lose packets in practice; allow one straggler rather than a flaky test
  expect(result.received, result.output).toBeGreaterThanOrEqual(SENT - 1);
}

function expectRefused(result: Allocation): void {
  expect(result.output).toContain('Cannot complete Allocation');
  expect(result.exitCode).not.toBe(0);
  expect(result.received).toBe(0);
}

async function turnFrom(authorization: string, on = app): Promise<TurnServer> {
  const response = await on.request('GET', '/v1/turn', jsonRequest({ authorization }));
  expect(response.status, response.text_).toBe(200);
  const [server] = JSON.parse(response.text_) as TurnServer[];
  return server!;
}

describe.skipIf(unavailable !== undefined)('TURN credentials against coturn', () => {
  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'convene-coturn-'));
    turnPort = await freeTcpUdpPort();
    peerPort = await freeTcpUdpPort();
    const relayMin = 49152 + randomInt(0, 150) * 100;
    start('turnserver', [
      '-n',
      '--listening-ip=127.0.0.1',
      '--relay-ip=127.0.0.1',
      `--listening-port=${turnPort}`,
      `--min-port=${relayMin}`,
      `--max-port=${relayMin + 99}`,
      '--use-auth-secret',
      `--static-auth-secret=${SECRET}`,
      '--realm=convene.test',
      '--no-tls',
      '--no-dtls',
      '--no-cli',
      '--fingerprint',
      '--allow-loopback-peers',
      `--userdb=${join(workDir, 'turndb')}`,
      `--log-file=${join(workDir, 'turn.log')}`,
      '--simple-log',
      `--pidfile=${join(workDir, 'turn.pid')}`,
    ]);
    start('turnutils_peer', ['-L', '127.0.0.1', '-p', String(peerPort)]);
    app = await startTestApp({
      turn: { lifetime: LIFETIME, servers: [{ uris: [`turn:127.0.0.1:${turnPort}?transport=udp`], shared_secret: SECRET }] },
    });
    user = await app.login('ada');
    await waitForTcp(turnPort, Date.now() + 15_000);
  }, 90_000);

  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
    await app?.close();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  it('allocates and relays with a user’s credentials over UDP and over TCP', async () => {
    const server = await turnFrom(`Bearer ${user.accessToken}`);
    expect(server.uris).toEqual([`turn:127.0.0.1:${turnPort}?transport=udp`]);
    expectRelayed(await allocate(server.username, server.password, 'udp'));
    expectRelayed(await allocate(server.username, server.password, 'tcp'));
  }, 60_000);

  it('allocates with a guest’s credentials (invite code as Bearer)', async () => {
    const code = await insertInvite(app, await insertRoom(app, user), user);
    const server = await turnFrom(`Bearer ${code}`);
    expectRelayed(await allocate(server.username, server.password, 'udp'));
  }, 60_000);

  it('refuses a wrong password', async () => {
    const server = await turnFrom(`Bearer ${user.accessToken}`);
    const wrong = Buffer.from(server.password, 'base64');
    wrong[0] = (wrong[0] ?? 0) ^ 1;
    expectRefused(await allocate(server.username, wrong.toString('base64'), 'udp'));
  }, 60_000);

  it('refuses credentials signed with another secret', async () => {
    const foreign = await app.withConfig({
      turn: { lifetime: LIFETIME, servers: [{ uris: [`turn:127.0.0.1:${turnPort}`], shared_secret: `${SECRET}-other` }] },
    });
    try {
      const server = await turnFrom(`Bearer ${user.accessToken}`, foreign);
      expectRefused(await allocate(server.username, server.password, 'udp'));
    } finally {
      await foreign.close();
    }
  }, 60_000);

  it('refuses credentials whose expiry has passed', async () => {
    // the service's own credential function with a clock two lifetimes back: the expiry in the username is over
    const [server] = turnCredentials(app.config.turn, { clock: () => Date.now() - 2 * LIFETIME * 1000 });
    expect(Number(server!.ttl)).toBeLessThan(Date.now() / 1000);
    expectRefused(await allocate(server!.username, server!.password, 'udp'));
  }, 60_000);
});
