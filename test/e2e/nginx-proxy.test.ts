/**
 * Convene behind a real reverse proxy: nginx on 127.0.0.1 forwarding with
 * `proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for` (the usual configuration, which
 * keeps what the client sent and appends the client's address). Clients reach nginx from loopback
 * addresses of their own and send X-Forwarded-For themselves; with `[http] trust_proxy` set to the
 * one hop (1) or to nginx's address, the per-source brute-force limit counts each client's real
 * address: 10 wrong invite codes, then 429, whatever the client claims, and another client behind
 * the same nginx keeps its own budget.
 *
 * nginx comes from Debian's `nginx-light` (or `nginx`) package; when it is missing the test installs
 * it if it runs as root and apt works, and otherwise skips with the reason printed.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { expectTooMany } from '../integration/rate-limits/guesses.js';
import { freshLoopback, limitedAfter, statusesOf, wrongCodeFrom } from '../support/client-address.js';
import { redisUrl } from '../support/signaling.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

/** nginx as installed: on the PATH, or where Debian puts it (/usr/sbin is not on every user's PATH). */
const findNginx = () => ['nginx', '/usr/sbin/nginx'].find((path) => spawnSync(path, ['-v']).status === 0);

/** Undefined when nginx is usable, else why not. */
function ensureNginx(): string | undefined {
  if (findNginx()) return undefined;
  if (process.getuid?.() !== 0) return 'nginx is not installed and the test does not run as root to install it';
  const install = spawnSync('sh', ['-c', 'apt-get install -y nginx-light || { apt-get update && apt-get install -y nginx-light; }'], {
    timeout: 240_000,
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    encoding: 'utf8',
  });
  if (findNginx()) return undefined;
  const detail =
    install.error?.message ??
    String(install.stderr ?? '')
      .trim()
      .split('\n')
      .slice(-2)
      .join(' ');
  return `nginx could not be installed with apt-get (${detail || `exit ${install.status}`})`;
}

const unavailable = ensureNginx();
if (unavailable) console.warn(`test/e2e/nginx-proxy.test.ts skipped: ${unavailable}`);
const NGINX = findNginx() ?? 'nginx';

const FAILURES = 10; // the default failures_per_source
const SENT = 30;
const withRedis = redisUrl ? { redis: { url: redisUrl } } : {};

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/** nginx in the foreground, one process, with its files in `dir`, proxying 127.0.0.1:`port` to `upstream`. */
async function startNginx(dir: string, port: number, upstream: string): Promise<ChildProcess> {
  const conf = join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass ${upstream};
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    }
  }
}
`,
  );
  const child = spawn(NGINX, ['-p', dir, '-c', conf, '-e', join(dir, 'error.log')], { stdio: 'ignore' });
  for (let tries = 0; tries < 100; tries++) {
    if (await acceptsConnections(port)) return child;
    if (child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`nginx did not start: ${readFileSync(join(dir, 'error.log'), 'utf8')}`);
}

describe.skipIf(unavailable !== undefined).each([
  { trust: 1 as const, label: 'one hop' },
  { trust: ['127.0.0.1'], label: "nginx's address" },
])('behind nginx, trust_proxy = $label', ({ trust }) => {
  let app: TestApp;
  let nginx: ChildProcess | undefined;
  let dir: string;
  let proxyUrl: string;
  beforeAll(async () => {
    app = await startTestApp({ ...withRedis, http: { trust_proxy: trust } });
    dir = mkdtempSync(join(tmpdir(), 'convene-nginx-'));
    const port = await freePort();
    nginx = await startNginx(dir, port, app.url);
    proxyUrl = `http://127.0.0.1:${port}`;
  });
  afterAll(async () => {
    if (nginx?.pid && nginx.exitCode === null) {
      const exited = new Promise((resolve) => nginx!.once('exit', resolve));
      nginx.kill('SIGTERM');
      await exited;
    }
    await app?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("counts each client's own address, whatever X-Forwarded-For it sends", async () => {
    const client = freshLoopback();
    const answers = [];
    for (let i = 0; i < SENT; i++) answers.push(await wrongCodeFrom(proxyUrl, client, `198.51.100.${i + 1}`));
    expect(answers.map(({ status }) => status)).toEqual(limitedAfter(FAILURES, SENT));
    expectTooMany(answers.at(-1)!, 'verify_invite_code', 300);
    // nginx's other clients keep their own budgets: nginx (every client's peer) is no source
    const other = freshLoopback();
    expect(await statusesOf(FAILURES, () => wrongCodeFrom(proxyUrl, other))).toEqual(limitedAfter(FAILURES, FAILURES));
    expectTooMany(await wrongCodeFrom(proxyUrl, other, '198.51.100.1'), 'verify_invite_code', 300);
  });
});
