// What the benchmarks' server processes share (http-server.ts, signaling-server.ts, media-server.ts
// and the baselines): each is forked with an IPC channel, answers its benchmark's messages, and
// stops, after its own `close`, on the benchmark's `close` or when the benchmark goes away
// (finished or crashed), so that no server outlives its benchmark. It imports nothing: the baselines
// load no more than they measure.

/** Hands every message but `close` to `onMessage`; `close` and the benchmark's going away stop the process after `close()`. */
export function serveBenchmark<M extends { type: string }>(close: () => Promise<void>, onMessage: (message: M) => void): void {
  let closing: Promise<void> | undefined;
  const stop = () => {
    closing ??= close().then(() => process.exit(0));
    return closing;
  };
  process.on('message', (message: M) => {
    if (message.type === 'close') void stop();
    else onMessage(message);
  });
  process.on('disconnect', () => void stop());
}
