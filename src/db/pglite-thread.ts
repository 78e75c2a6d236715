/**
 * Embedded PGlite in a worker thread (pglite-worker.ts), reached by `pg` as a server is: each
 * connection's "socket" is a MessagePort to the thread carrying the wire protocol's bytes. PGlite
 * runs each query as synchronous WebAssembly; in the server's own thread a long query stopped every
 * socket (HTTP, signaling) until it ended, and under load the queries' CPU queued behind requests'
 * and requests' behind queries'. In its own thread it runs beside them.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { Duplex } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';

import type { FromPGliteThread, PGliteThreadOptions, ToPGliteThread } from './pglite-worker.js';

export interface PGliteThread {
  /** A new connection to the database, for pg's `stream` option. */
  connect(): PGliteSocket;
  /** Closes PGlite (its data directory is then free) and ends the thread. Safe to call twice. */
  close(): Promise<void>;
}

/** The worker's script: the TypeScript source where this module is one (tsx, vitest), else the compiled one. */
const workerScript = new URL(import.meta.url.endsWith('.ts') ? './pglite-worker.ts' : './pglite-worker.js', import.meta.url);

/**
 * PGlite's WebAssembly, compiled once per process: a compiled module crosses to a thread without
 * being compiled again, where each thread would otherwise compile its own (seconds of CPU: the
 * tests open many databases, the CLI's commands one each).
 */
let compiledPGlite: Promise<unknown> | undefined;
function pgliteWasm(): Promise<unknown> {
  const wasm = new URL('./pglite.wasm', pathToFileURL(createRequire(import.meta.url).resolve('@electric-sql/pglite')));
  const { WebAssembly } = globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<unknown> } };
  compiledPGlite ??= readFile(wasm).then((bytes) => WebAssembly.compile(bytes));
  return compiledPGlite;
}

export async function startPGliteThread(options: PGliteThreadOptions, onFailure?: (err: Error) => void): Promise<PGliteThread> {
  const worker = new Worker(workerScript, { workerData: { ...options, wasmModule: await pgliteWasm() } satisfies PGliteThreadOptions });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  await started(worker);

  const sockets = new Set<PGliteSocket>();
  let failure: Error | undefined;
  let closing: Promise<void> | undefined;
  /** The thread is gone: its connections fail now (as a server's that went away) and new ones are refused. */
  const fail = (reason: Error) => {
    if (failure) return;
    failure = reason;
    for (const socket of sockets) socket.destroy(connectionError('ECONNRESET', reason));
    if (!closing) onFailure?.(reason);
  };
  worker.on('error', (err: Error) => fail(new Error(`the embedded database (PGlite) failed: ${err.message}`, { cause: err })));
  worker.once('exit', (code) => fail(new Error(`the embedded database (PGlite) is closed (its thread exited with code ${code})`)));

  return {
    connect() {
      const socket = new PGliteSocket((port) => {
        if (failure) throw connectionError('ECONNREFUSED', failure);
        worker.postMessage({ type: 'connect', port } satisfies ToPGliteThread, [port]);
      });
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      return socket;
    },
    close() {
      closing ??= (async () => {
        if (!failure) worker.postMessage({ type: 'close' } satisfies ToPGliteThread);
        await exited;
      })();
      return closing;
    },
  };
}

/** Resolves when the thread's PGlite is up; rejects with why it did not start (its error, or its exit). */
function started(worker: Worker): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const settle = (err?: Error) => {
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      if (err) reject(new Error(`the embedded database (PGlite) did not start: ${err.message}`, { cause: err }));
      else resolve();
    };
    // the thread's one message before it is up
    const onMessage = (_ready: FromPGliteThread) => settle();
    const onError = (err: Error) => settle(err);
    const onExit = (code: number) => settle(new Error(`its thread exited with code ${code}`));
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
  });
}

function connectionError(code: string, cause: Error): Error {
  return Object.assign(new Error(cause.message, { cause }), { code });
}

/**
 * One connection as pg sees a socket: `connect` opens a port to the thread, writes go there
 * (pg corks a query's messages: they leave as one), the thread's answers come back as data.
 */
export class PGliteSocket extends Duplex {
  private port: MessagePort | undefined;

  constructor(private readonly open: (port: MessagePort) => void) {
    super();
  }

  connect(): this {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    port1.on('message', (bytes: Uint8Array) => this.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)));
    try {
      this.open(port2);
    } catch (err) {
      process.nextTick(() => this.destroy(err as Error));
      return this;
    }
    process.nextTick(() => this.emit('connect'));
    return this;
  }

  setNoDelay(): this {
    return this;
  }

  setKeepAlive(): this {
    return this;
  }

  ref(): this {
    this.port?.ref();
    return this;
  }

  unref(): this {
    this.port?.unref();
    return this;
  }

  override _read(): void {
    // the thread's answers are pushed as they come
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (err?: Error | null) => void): void {
    this.send([chunk]);
    callback();
  }

  override _writev(chunks: { chunk: Buffer }[], callback: (err?: Error | null) => void): void {
    this.send(chunks.map(({ chunk }) => chunk));
    callback();
  }

  /** Copied into a buffer of their own (pg's may be slices of a shared pool) that is then moved, not cloned. */
  private send(chunks: Buffer[]): void {
    const bytes = new Uint8Array(chunks.reduce((total, chunk) => total + chunk.byteLength, 0));
    let offset = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, offset);
      offset += chunk.byteLength;
    }
    this.port?.postMessage(bytes, [bytes.buffer]);
  }

  override _final(callback: (err?: Error | null) => void): void {
    this.port?.close();
    this.push(null);
    callback();
  }

  override _destroy(err: Error | null, callback: (err?: Error | null) => void): void {
    this.port?.close();
    callback(err);
  }
}
