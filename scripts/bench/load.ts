// The load generator of the HTTP benchmarks, in a process of its own: autocannon here and the server
// under test elsewhere, so that neither shares an event loop with the other (on this 2-core machine
// they still share the cores, as the targets say: "load generator included").
//
// The benchmark forks it (fork('load.ts', { execArgv: ['--import', 'tsx'] })) and sends `LoadRequest`s
// one at a time; each runs autocannon for the given seconds and answers a `LoadResult` with every
// 2xx answer's latency, taken from each response (autocannon's own histogram keeps whole
// milliseconds only), so that the benchmark can pool several runs of one operation. The answers of
// a run's first SETTLE_MS, while its 50 connections open, are not counted.
import autocannon from 'autocannon';

export interface LoadRequest {
  type: 'run';
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  connections: number;
  seconds: number;
}

export interface LoadResult {
  type: 'result';
  /** The run's length as autocannon measured it, less the time its answers were not counted. */
  seconds: number;
  /** Milliseconds of each 2xx answer (after the settling time). */
  latencies: number[];
  /** Every answer of the run, the settling time's too: what the server's CPU time was spent on. */
  answers: number;
  /** Answers other than 2xx, and the first such status. */
  non2xx: number;
  firstBadStatus?: number;
  /** Connection errors and timeouts (10 s). */
  errors: number;
}

const SETTLE_MS = 250;

if (!process.send) throw new Error('forked by an HTTP benchmark (with an IPC channel)');
const send = process.send.bind(process);

async function load(request: LoadRequest): Promise<LoadResult> {
  const latencies: number[] = [];
  let non2xx = 0;
  let firstBadStatus: number | undefined;
  let counting = false;
  let answers = 0;
  setTimeout(() => (counting = true), SETTLE_MS);
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const options = {
      url: request.url,
      method: request.method,
      headers: request.headers,
      body: request.body,
      connections: request.connections,
      duration: request.seconds,
      timeout: 10,
    };
    const instance = autocannon(options, (err, done) => (err ? reject(err) : resolve(done)));
    instance.on('response', (_client, status, _bytes, ms) => {
      answers++;
      if (status >= 200 && status < 300) {
        if (counting) latencies.push(ms);
      } else {
        non2xx++;
        firstBadStatus ??= status;
      }
    });
  });
  return {
    type: 'result',
    seconds: (result.duration || request.seconds) - SETTLE_MS / 1000,
    latencies,
    answers,
    non2xx,
    ...(firstBadStatus === undefined ? {} : { firstBadStatus }),
    errors: result.errors + result.timeouts,
  };
}

process.on('message', (request: LoadRequest) => {
  load(request).then(send, (err: unknown) => {
    console.error(err);
    process.exit(1); // the benchmark sees the exit
  });
});
process.on('disconnect', () => process.exit(0));
