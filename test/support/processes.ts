/**
 * Commands as real processes, for the tests of the `convene` command and of `npm start`: a run to
 * its end, or a long-running one (a server) to signal. Each gets only the environment given (the
 * PATH of this Node 24, HOME in the test's directory), so nothing of the test run leaks into it.
 * Every started process is killed by `killStarted()` (afterAll), so a failed test leaves none behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const root = fileURLToPath(new URL('../../', import.meta.url));
const tsx = pathToFileURL(join(root, 'node_modules/tsx/dist/loader.mjs')).href;

export interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface Started {
  readonly pid: number;
  readonly exited: Promise<Ended>;
  stdout(): string;
  stderr(): string;
  kill(signal: NodeJS.Signals): void;
}

const started = new Set<ChildProcess>();

/** PATH with this Node first (npm's `#!/usr/bin/env node` runs on it), then the system's. */
export function commandEnv(cwd: string, extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, HOME: cwd, TZ: 'UTC', ...extra };
}

export function startCommand(command: string, args: string[], cwd: string, env: Record<string, string>): Started {
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  started.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<Ended>((resolve, reject) => {
    child.once('error', reject);
    // 'close', not 'exit': the output has been read to the end by then
    child.once('close', (code, signal) => {
      started.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return { pid: child.pid!, exited, stdout: () => stdout, stderr: () => stderr, kill: (signal) => void child.kill(signal) };
}

/** Runs a command to its end; SIGKILLs it and rejects after `timeoutMs`. */
export async function runCommand(command: string, args: string[], cwd: string, env: Record<string, string>, timeoutMs = 60_000): Promise<Ended> {
  const child = startCommand(command, args, cwd, env);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} did not end within ${timeoutMs} ms:\n${child.stdout()}\n${child.stderr()}`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([child.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** `convene <args>` from the sources (tsx), as `npm run convene -- <args>` runs it. */
export function runConvene(args: string[], cwd: string, env: Record<string, string>, timeoutMs?: number): Promise<Ended> {
  return runCommand(process.execPath, ['--import', tsx, join(root, 'src/cli/index.ts'), ...args], cwd, env, timeoutMs);
}

/** SIGKILLs every started process still running and waits until each is gone. */
export async function killStarted(): Promise<void> {
  await Promise.all(
    [...started].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}

/** A loopback port that was free a moment ago (for commands that take their port from the configuration). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once `GET /health` on the port answers 200; rejects when `server` ended first or after `timeoutMs`. */
export async function healthy(port: number, server: Started, timeoutMs = 90_000): Promise<void> {
  let ended = false;
  void server.exited.then(() => (ended = true));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (ended) throw new Error(`the process ended before answering /health:\n${server.stdout()}\n${server.stderr()}`);
    try {
      const response = await fetch(`http://127.0.0.1:${port}/health`);
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`no healthy answer on port ${port} within ${timeoutMs} ms:\n${server.stdout()}\n${server.stderr()}`);
}

/** Whether a process of that id exists (signal 0). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The JSON log records of a server's standard output. */
export function logRecords(stdout: string): Array<Record<string, unknown>> {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
