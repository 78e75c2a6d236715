// The soak's Convene instance, run in a child process (soak-server.ts) so that its memory and
// handles are its own and not mixed with the thousand clients of the load generator. The two speak
// over the IPC channel: the child sends `ready` once it listens; `measure` is answered with its
// memory after full collections, its open handles and live timers, and what it logged; `close`
// stops it.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** A user of the issuer in the child, with tokens valid for an hour (the full soak runs for minutes). */
export interface SoakUser {
  name: string;
  idToken: string;
  accessToken: string;
}

export interface ServerReady {
  type: 'ready';
  url: string;
  users: SoakUser[];
}

export interface ServerMeasure {
  type: 'measure';
  memory: NodeJS.MemoryUsage;
  /** process.getActiveResourcesInfo(), counted per kind. */
  resources: Record<string, number>;
  /**
   * Open TCP sockets by peer: `http_in` (clients of Convene, sockets included), `issuer_in` (the
   * test issuer's own clients), `postgres`, `redis`, `issuer_out` and `other`.
   */
  sockets: Record<string, number>;
  /** Live timers, refed or not (live-timers.ts). */
  timers: number;
  /** CPU time of the server process so far (user and system), seconds. */
  cpuSeconds: number;
  /** Entries the server logged at warn (40) or above since it started, and the first of them. */
  log: { warnings: number; errors: number; first: string[] };
}

export type ServerRequest = { type: 'measure' } | { type: 'close' };

export class SoakServer {
  private constructor(
    private readonly child: ChildProcess,
    readonly ready: ServerReady,
  ) {}

  /** Forks the server with `users` logged-out users of its issuer; resolves once it listens. */
  static async start(users: number): Promise<SoakServer> {
    const child = fork(fileURLToPath(new URL('./soak-server.ts', import.meta.url)), [String(users)], {
      execArgv: ['--import', 'tsx', '--expose-gc'],
    });
    try {
      return new SoakServer(child, await nextMessage<ServerReady>(child, 'ready', 120_000));
    } catch (err) {
      child.kill('SIGKILL');
      throw err;
    }
  }

  async measure(): Promise<ServerMeasure> {
    const answer = nextMessage<ServerMeasure>(this.child, 'measure', 60_000);
    this.child.send({ type: 'measure' } satisfies ServerRequest);
    return answer;
  }

  async close(): Promise<void> {
    const child = this.child;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.send({ type: 'close' } satisfies ServerRequest);
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(killer);
  }
}

function nextMessage<T extends { type: string }>(child: ChildProcess, type: T['type'], timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const done = () => {
      child.off('message', onMessage);
      child.off('exit', onExit);
      clearTimeout(timer);
    };
    const onMessage = (message: T) => {
      if (message.type !== type) return;
      done();
      resolve(message);
    };
    const onExit = (code: number | null) => {
      done();
      reject(new Error(`the soak server exited (${code}) before sending ${type}`));
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`the soak server sent no ${type} within ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}
