/**
 * A PostgreSQL server of a test's own, for fault tests that stop and start it: `initdb` into a
 * temporary directory, `pg_ctl start` on a free loopback port (its Unix socket in that directory
 * too), `stop('fast' | 'immediate')` and `start()` at will, `destroy()` at the end. It never
 * touches the machine's server on 5432.
 *
 *   const reason = privatePostgresUnavailable();   // undefined, or why the test must skip
 *   const postgres = await startPrivatePostgres();  // ~3 s: initdb is most of it
 *   … postgres.url …  await postgres.stop('immediate');  await postgres.start();
 *   await postgres.destroy();                        // in afterAll, also after a failure
 *
 * The binaries come from `/usr/lib/postgresql/<version>/bin` (Debian, highest version), `PG_BIN_DIR`,
 * or the PATH. initdb and postgres refuse to run as root: as root the server runs as the `postgres`
 * user (or `nobody`), which owns the temporary directory. Every command is spawned asynchronously,
 * so a Convene instance in the same process keeps answering while the server stops or starts.
 * Should the test process exit without `destroy()`, an exit hook still stops the server (SIGQUIT to
 * the postmaster: an immediate shutdown) and removes the directory.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication). */
  readonly url: string;
  readonly port: number;
  /** Whether the server runs (as far as this helper started and stopped it). */
  readonly running: boolean;
  /**
   * Stops the server. `fast`: the clients are disconnected and the server shuts down cleanly.
   * `immediate`: the processes quit at once without a checkpoint, as after a crash; the next start
   * replays the WAL.
   */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts it again on the same port and data; resolves once it accepts connections. */
  start(): Promise<void>;
  /**
   * Freezes the server (SIGSTOP to the postmaster and every backend): connections stay open and
   * nothing answers, as with a hung machine or a network partition. `thaw()` lets it go on.
   */
  freeze(): void;
  thaw(): void;
  /** Stops the server if it runs and removes its directory. Safe to call twice. */
  destroy(): Promise<void>;
}

export interface PrivatePostgresOptions {
  /** Server settings (`-c name=value`) beside the defaults below. */
  settings?: Record<string, string>;
}

/** Light settings for a short-lived test server on a shared machine. */
const DEFAULT_SETTINGS: Record<string, string> = { shared_buffers: '32MB', max_connections: '50' };
const COMMAND_TIMEOUT_MS = 60_000;

/** The directory holding initdb, pg_ctl and postgres, or undefined. */
function binDir(): string | undefined {
  const complete = (dir: string) => ['initdb', 'pg_ctl', 'postgres'].every((tool) => existsSync(join(dir, tool)));
  const configured = process.env.PG_BIN_DIR;
  if (configured) return complete(configured) ? configured : undefined;
  const debian = '/usr/lib/postgresql';
  const versions = existsSync(debian)
    ? readdirSync(debian)
        .filter((name) => /^\d+(\.\d+)?$/.test(name))
        .sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a))
    : [];
  for (const version of versions) {
    const dir = join(debian, version, 'bin');
    if (complete(dir)) return dir;
  }
  const found = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  const initdb = found.status === 0 ? found.stdout.trim() : '';
  return initdb && complete(join(initdb, '..')) ? join(initdb, '..') : undefined;
}

/** The account the server runs as when this process is root (initdb and postgres refuse root). */
function serverAccount(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const passwd = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .map((line) => line.split(':'));
  for (const name of ['postgres', 'nobody']) {
    const entry = passwd.find((fields) => fields[0] === name);
    if (entry && Number(entry[2]) > 0) return { uid: Number(entry[2]), gid: Number(entry[3]) };
  }
  throw new Error('running as root, and there is no postgres or nobody account to run PostgreSQL as');
}

/** Undefined when a private server can be started here, else why not (the test then skips). */
export function privatePostgresUnavailable(): string | undefined {
  if (!binDir()) {
    return 'the PostgreSQL server binaries (initdb, pg_ctl, postgres) are not installed (looked in PG_BIN_DIR, /usr/lib/postgresql/*/bin and the PATH)';
  }
  try {
    serverAccount();
  } catch (err) {
    return (err as Error).message;
  }
  return undefined;
}

/** A loopback TCP port nobody listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Runs a command to its exit (not its pipes' end: a server it starts may keep them), failing with its output. */
function run(command: string, args: string[], account: { uid: number; gid: number } | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      // no PG* variables of the caller's (PGPORT, PGDATA …) and a locale every machine has
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C', LANG: 'C' },
      ...account,
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), COMMAND_TIMEOUT_MS);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`${command} ${args.join(' ')} failed (${signal ?? `exit ${code}`}):\n${output.trim()}`));
    });
  });
}

export async function startPrivatePostgres(options: PrivatePostgresOptions = {}): Promise<PrivatePostgres> {
  const bin = binDir();
  if (!bin) throw new Error(privatePostgresUnavailable());
  const account = serverAccount();
  const dir = mkdtempSync(join(tmpdir(), 'convene-pg-'));
  if (account) chownSync(dir, account.uid, account.gid);
  const dataDir = join(dir, 'data');
  const tool = (name: string) => join(bin, name);

  let running = false;
  let destroyed = false;
  // should the process end without destroy(): the postmaster quits at once (SIGQUIT), the directory goes
  const onExit = () => {
    try {
      const pid = Number.parseInt(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8'), 10);
      if (pid > 0) process.kill(pid, 'SIGQUIT');
    } catch {
      // not running
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', onExit);
  /** The postmaster and its children (backends, checkpointer …): a frozen postmaster alone still lets backends answer. */
  const signalCluster = (signal: NodeJS.Signals) => {
    const pid = Number.parseInt(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8'), 10);
    const children = spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .stdout.split('\n')
      .filter(Boolean)
      .map(Number);
    for (const target of [pid, ...children]) process.kill(target, signal);
  };

  let port = 0;
  const settings = { ...DEFAULT_SETTINGS, ...options.settings };
  const start = async () => {
    const serverOptions = [`-p ${port}`, `-k '${dir}'`, "-c listen_addresses='127.0.0.1'"];
    for (const [name, value] of Object.entries(settings)) serverOptions.push(`-c ${name}=${value}`);
    await run(tool('pg_ctl'), ['-D', dataDir, '-l', join(dir, 'server.log'), '-w', '-t', '30', '-o', serverOptions.join(' '), 'start'], account);
    running = true;
  };

  try {
    await run(tool('initdb'), ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C', '--no-instructions'], account);
    // a port taken between the check and the start fails the start: one more try on another port
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
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    get running() {
      return running;
    },
    async stop(mode = 'fast') {
      await run(tool('pg_ctl'), ['-D', dataDir, '-m', mode, '-w', '-t', '30', 'stop'], account);
      running = false;
    },
    start,
    freeze() {
      signalCluster('SIGSTOP');
    },
    thaw() {
      signalCluster('SIGCONT');
    },
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      process.off('exit', onExit);
      try {
        if (running) await run(tool('pg_ctl'), ['-D', dataDir, '-m', 'immediate', '-w', '-t', '30', 'stop'], account);
        running = false;
      } finally {
        onExit(); // a server pg_ctl could not stop still gets its SIGQUIT; the directory goes either way
      }
    },
  };
}
