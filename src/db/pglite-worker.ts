/**
 * The embedded database's own thread (started by pglite-thread.ts): PGlite, spoken to over the
 * PostgreSQL wire protocol, so that its work (a query is synchronous WebAssembly) never blocks the
 * server's event loop. Each connection of the main thread's `pg` pool is a MessagePort carrying
 * the bytes a socket would; the thread cuts them into whole messages, runs them through PGlite and
 * sends back what PGlite answers. PGlite is one session: the connections take turns on it.
 *
 * Imports nothing of src/ (it runs as its own entry, compiled or with Node's type stripping).
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';

/** What pglite-thread.ts passes as workerData. */
export interface PGliteThreadOptions {
  /** The data directory; in memory without one. */
  dataDir?: string;
  /** A dumped data directory to start from (in memory). */
  loadDataDir?: Blob;
  /** PGlite's WebAssembly.Module, compiled by the main thread (the build's types have no WebAssembly). */
  wasmModule?: unknown;
}

/** Messages of the main thread to this one. */
export type ToPGliteThread = { type: 'connect'; port: MessagePort } | { type: 'close' };
/** Messages of this thread to the main one. */
export type FromPGliteThread = { type: 'ready' };

if (!parentPort) throw new Error('pglite-worker.ts runs as a worker thread (pglite-thread.ts starts it)');
const parent = parentPort;
const options = workerData as PGliteThreadOptions;

const pglite = await PGlite.create({
  ...(options.dataDir ? { dataDir: options.dataDir } : {}),
  ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
  ...(options.wasmModule ? { pgliteWasmModule: options.wasmModule } : {}),
});

/** Everything PGlite does, one after the other: it is one session. */
let turn: Promise<unknown> = Promise.resolve();
function inTurn<T>(work: () => Promise<T>): Promise<T> {
  const next = turn.then(work);
  turn = next.catch(() => undefined);
  return next;
}

/** Whether a connection has used the session: the next one gets it reset. */
let sessionUsed = false;

/**
 * A new connection is a new session to `pg` (no prepared statements, no transaction): end
 * whatever the one before left behind (an unfinished extended query, a transaction, named
 * statements) before it starts.
 */
async function resetSession(): Promise<void> {
  if (!sessionUsed) {
    sessionUsed = true;
    return;
  }
  await pglite.execProtocolRaw(SYNC);
  await pglite.exec('rollback');
  await pglite.exec('discard all');
}
const SYNC = new Uint8Array([0x53, 0, 0, 0, 4]);

function serve(port: MessagePort): void {
  const frames = new Framer();
  const ready = inTurn(resetSession);
  port.on('message', (chunk: Uint8Array) => {
    const { startup, messages } = frames.push(chunk);
    ready
      .then(() =>
        inTurn(async () => {
          // the startup answer is a view of PGlite's own buffer: copied, never transferred
          if (startup) answer(port, (await pglite.execProtocolRaw(startup)).slice());
          if (messages) answer(port, await pglite.execProtocolRaw(messages));
        }),
      )
      .catch(crash);
  });
}

/**
 * PGlite failed outside a query (a query's error is an answer like any other): it exited (a FATAL
 * error ends PostgreSQL's one process) or broke, and cannot be trusted further. The thread ends
 * with the reason; the main thread counts the database as down.
 */
function crash(reason: unknown): void {
  const status = (reason as { status?: unknown } | undefined)?.status;
  const err =
    reason instanceof Error ? reason : new Error(typeof status === 'number' ? `PGlite exited with status ${status}` : `PGlite failed: ${String(reason)}`);
  process.nextTick(() => {
    throw err;
  });
}

function answer(port: MessagePort, bytes: Uint8Array): void {
  if (bytes.byteLength > 0) port.postMessage(bytes, [bytes.buffer as ArrayBuffer]);
}

/**
 * Cuts a connection's bytes into whole protocol messages: the first is the startup packet (a
 * length, no type byte), every later one a type byte and a length.
 */
class Framer {
  private pending: Uint8Array = new Uint8Array(0);
  private started = false;

  push(chunk: Uint8Array): { startup?: Uint8Array; messages?: Uint8Array } {
    this.pending = this.pending.byteLength === 0 ? chunk : concat(this.pending, chunk);
    let startup: Uint8Array | undefined;
    let offset = 0;
    if (!this.started) {
      const length = lengthAt(this.pending, 0);
      if (length === undefined || this.pending.byteLength < length) return {};
      startup = this.pending.slice(0, length);
      this.started = true;
      offset = length;
    }
    let end = offset;
    for (;;) {
      const length = lengthAt(this.pending, end + 1);
      if (length === undefined || this.pending.byteLength < end + 1 + length) break;
      end += 1 + length;
    }
    const messages = end > offset ? this.pending.slice(offset, end) : undefined;
    this.pending = this.pending.subarray(end);
    return { ...(startup ? { startup } : {}), ...(messages ? { messages } : {}) };
  }
}

/** A message's length (its own four bytes included), or undefined while they have not all come. */
function lengthAt(bytes: Uint8Array, offset: number): number | undefined {
  if (bytes.byteLength < offset + 4) return undefined;
  const length = new DataView(bytes.buffer, bytes.byteOffset + offset, 4).getInt32(0);
  // pg never sends one; cutting on would go wrong from here on (the thread ends, the database is down)
  if (length < 4) throw new Error(`a protocol message of length ${length}`);
  return length;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const joined = new Uint8Array(a.byteLength + b.byteLength);
  joined.set(a);
  joined.set(b, a.byteLength);
  return joined;
}

parent.on('message', (message: ToPGliteThread) => {
  if (message.type === 'connect') serve(message.port);
  // after the queries under way; the thread then ends (the main thread waits for its exit)
  else void inTurn(() => pglite.close()).then(() => process.exit(0));
});
parent.postMessage({ type: 'ready' } satisfies FromPGliteThread);
