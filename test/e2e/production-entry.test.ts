/**
 * The production entry point (issue 17). A copy of the checkout (its sources, package files and
 * dependencies) is packed with `npm pack`, whose `prepare` script builds dist/ as `npm install` does
 * in a fresh clone. Then:
 *
 * - `npm start` runs the built server, and SIGTERM or SIGINT sent to the npm process (not to the
 *   server) stops Convene gracefully: npm exits 0, the server logged its shutdown, no process is
 *   left and the data directory is unlocked.
 * - a busy port ends `convene serve` with one line naming the port, before ./data is created.
 * - without a build, the `convene` command says how to make one.
 * - the packed tarball carries the build and the `convene` bin (and no sources), and installed as
 *   `npm install -g` lays it out, `convene migrate` and `convene serve` run from it. The tests only
 *   talk to loopback, so the dependencies come from this checkout instead of the registry; the
 *   README records a real `npm install -g --prefix` of the tarball.
 *
 * With DATABASE_URL, the `npm start` and installed-package runs use a fresh database on that server.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyServerDatabase } from '../support/database.js';
import { commandEnv, freePort, healthy, isRunning, killStarted, logRecords, root, runCommand, startCommand } from '../support/processes.js';

const databaseUrl = process.env.DATABASE_URL || undefined;
/** What a fresh clone has besides its tests and tools. */
const CHECKOUT = [
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'src',
  'generated',
  'packages/client',
  'bin',
  'scripts/prepare.mjs',
  'convene.example.toml',
  'README.md',
];
const EXIT_WITHIN_MS = 30_000;

const dirs: string[] = [];
const drops: Array<() => Promise<void>> = [];
let checkout: string;
let tarball: string;

function tempDir(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `convene-${name}-`));
  dirs.push(dir);
  return dir;
}

/** The database part of a server's environment: PGlite in ./data, or a fresh database on the server. */
async function databaseEnv(): Promise<Record<string, string>> {
  if (!databaseUrl) return {};
  const database = await emptyServerDatabase(databaseUrl, 'convene_entry');
  drops.push(database.drop);
  return { DATABASE_URL: database.url };
}

beforeAll(async () => {
  checkout = tempDir('checkout');
  for (const path of CHECKOUT) cpSync(join(root, path), join(checkout, path), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(checkout, 'node_modules'));
  const packed = tempDir('packed');
  const pack = await runCommand('npm', ['pack', '--pack-destination', packed], checkout, commandEnv(tempDir('home')), 300_000);
  expect(pack.code, pack.stderr).toBe(0);
  tarball = join(packed, 'convene-0.1.0.tgz');
}, 320_000);

afterAll(async () => {
  await killStarted();
  await Promise.all(drops.map((drop) => drop()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('npm start', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    'stops Convene gracefully on %s to the npm process, leaving no process and no lock',
    async (signal) => {
      const port = await freePort();
      const env = commandEnv(checkout, { PORT: String(port), CONVENE_HTTP__HOST: '127.0.0.1', ...(await databaseEnv()) });
      const npm = startCommand('npm', ['start'], checkout, env);
      await healthy(port, npm);
      const listening = logRecords(npm.stdout()).find((record) => String(record.msg).startsWith('Convene listening'));
      const serverPid = listening?.pid as number;
      expect(serverPid).not.toBe(npm.pid); // npm's child, the server itself, not npm

      process.kill(npm.pid, signal);
      const ended = await Promise.race([
        npm.exited,
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`npm start did not end:\n${npm.stdout()}\n${npm.stderr()}`)), EXIT_WITHIN_MS)),
      ]);

      expect(ended.code, ended.stderr).toBe(0);
      const messages = logRecords(ended.stdout).map((record) => [record.msg, record.signal]);
      expect(messages).toContainEqual(['shutting down', signal]);
      expect(messages.at(-1)).toEqual(['Convene stopped', undefined]);
      expect(isRunning(serverPid)).toBe(false);
      expect(existsSync(join(checkout, 'data', '.lock'))).toBe(false);
    },
    120_000,
  );
});

describe('convene serve on a busy port', () => {
  let holder: Server;
  let port: number;
  beforeAll(async () => {
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    port = (holder.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => holder.close(() => resolve())));

  it('says so in one line naming the port and exits 2 before creating ./data', async () => {
    const cwd = tempDir('busy');
    const env = commandEnv(cwd, { PORT: String(port), CONVENE_HTTP__HOST: '127.0.0.1' });
    const ended = await runCommand(process.execPath, [join(checkout, 'bin/convene.js'), 'serve'], cwd, env);
    expect(ended.code).toBe(2);
    expect(ended.stderr).toBe(
      `convene: port ${port} (on 127.0.0.1) is already in use (is Convene already running?); stop that process or set [http] port (PORT)\n`,
    );
    expect(ended.stdout).toBe('');
    expect(readdirSync(cwd)).toEqual([]);
  });
});

it('says how to build when dist/ is missing', async () => {
  const bare = tempDir('unbuilt');
  cpSync(join(root, 'bin'), join(bare, 'bin'), { recursive: true });
  const ended = await runCommand(process.execPath, [join(bare, 'bin/convene.js'), 'serve'], bare, commandEnv(bare));
  expect(ended.code).toBe(1);
  expect(ended.stderr).toBe('convene: the server is not built (dist/ is missing); run `npm run build` (`npm install` builds it too)\n');
  expect(readdirSync(bare)).toEqual(['bin']);
});

describe('the packed package', () => {
  let convene: string;
  beforeAll(async () => {
    const listing = await runCommand('tar', ['tzf', tarball], root, commandEnv(root));
    const files = listing.stdout.split('\n').filter(Boolean);
    expect(files).toEqual(
      expect.arrayContaining([
        'package/package.json',
        'package/bin/convene.js',
        'package/dist/src/cli/index.js',
        'package/dist/src/main.js',
        'package/convene.example.toml',
      ]),
    );
    expect(
      files.filter(
        (file) => /^package\/(src|test|scripts|spec|packages)\/|^package\/dist\/src\/client\//.test(file) || /\.ts$/.test(file.replace(/\.d\.ts$/, '')),
      ),
    ).toEqual([]);

    // as `npm install -g --prefix <prefix> convene-0.1.0.tgz` lays it out
    const prefix = tempDir('prefix');
    const installed = join(prefix, 'lib/node_modules/convene');
    mkdirSync(installed, { recursive: true });
    const unpacked = await runCommand('tar', ['xzf', tarball, '--strip-components=1', '-C', installed], root, commandEnv(root));
    expect(unpacked.code, unpacked.stderr).toBe(0);
    symlinkSync(join(root, 'node_modules'), join(installed, 'node_modules'));
    mkdirSync(join(prefix, 'bin'));
    symlinkSync('../lib/node_modules/convene/bin/convene.js', join(prefix, 'bin/convene'));
    convene = join(prefix, 'bin/convene');
  });

  it('migrates the configured database with `convene migrate`', async () => {
    const cwd = tempDir('migrate');
    const ended = await runCommand(convene, ['migrate'], cwd, commandEnv(cwd, await databaseEnv()));
    expect(ended.code, ended.stderr).toBe(0);
    expect(ended.stdout).toMatch(new RegExp(`^${databaseUrl ? 'PostgreSQL' : 'PGlite in \\./data'}: applied 2026_11_21_0001_initial, `));
  }, 60_000);

  it('serves with `convene serve` until SIGTERM', async () => {
    const cwd = tempDir('serve');
    const port = await freePort();
    const server = startCommand(convene, ['serve'], cwd, commandEnv(cwd, { PORT: String(port), CONVENE_HTTP__HOST: '127.0.0.1', ...(await databaseEnv()) }));
    await healthy(port, server);
    server.kill('SIGTERM');
    const ended = await server.exited;
    expect(ended.code, ended.stderr).toBe(0);
    expect(logRecords(ended.stdout).at(-1)?.msg).toBe('Convene stopped');
    expect(existsSync(join(cwd, 'data', '.lock'))).toBe(false);
  }, 120_000);
});
