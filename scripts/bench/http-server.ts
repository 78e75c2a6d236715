// The Convene instance under the HTTP benchmark, in a process of its own, built as src/main.ts
// builds it, from the build in dist/ that the benchmark made at its start (built.ts): the
// configuration from the environment (http.bench.ts sets CONVENE_… variables and
// DATABASE_URL/REDIS_URL; no TOML file, so a developer's ./convene.toml cannot change the figures),
// its logger at the configured level, and every request validator compiled before it reports ready,
// so that the compilation in the background does not fall into a measured run.
//
// Forked by http.bench.ts; answers `{type: 'ready', url}` over IPC and stops on `{type: 'close'}`.
// `{type: 'profile', name}` profiles the operation that follows, with BENCH_CPU_PROF (profiler.ts).
// `{type: 'loop-delay'}` answers the event loop's delay since the previous one (`LoopDelay`): how
// long a timer due now waited, i.e. how long the loop was kept from every socket.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type * as ConfigLoading from '../../src/config/load.js';
import type * as Server from '../../src/server.js';
import { builtModule } from './built.js';
import { startProfile, stopProfile } from './profiler.js';
import { serveBenchmark } from './server-process.js';

/** The event loop's delay over a span, ms (perf_hooks.monitorEventLoopDelay, sampled every 10 ms). */
export interface LoopDelay {
  type: 'loop-delay';
  p50: number;
  p99: number;
  max: number;
}

if (!process.send) throw new Error('forked by http.bench.ts (with an IPC channel)');
const send = process.send.bind(process);

// one user starts one room thousands of times a second: the ticket caps (tested on their own) would
// make the start benchmark measure 429s
const { loadConfig } = await builtModule<typeof ConfigLoading>('config/load.js');
const { createConvene } = await builtModule<typeof Server>('server.js');
const config = loadConfig({
  file: false,
  // and the access log (on by default since it was added) off, so that the figures stay comparable
  // with those of scripts/bench/RESULTS.md, measured when a finished request was logged at debug
  overrides: {
    signaling_caps: { tickets_per_user: 1_000_000_000, tickets_per_source: 1_000_000_000 },
    logging: { access_log: false },
  },
});
const convene = await createConvene(config);
const { port } = await convene.listen();
await convene.warmUp();
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
send({ type: 'ready', url: `http://127.0.0.1:${port}` });

serveBenchmark<{ type: string; name?: string }>(
  () => stopProfile().then(() => convene.close()),
  (message) => {
    if (message.type === 'profile') void startProfile(message.name ?? 'profile');
    if (message.type === 'loop-delay') {
      const ms = (ns: number) => ns / 1e6;
      send({ type: 'loop-delay', p50: ms(loopDelay.percentile(50)), p99: ms(loopDelay.percentile(99)), max: ms(loopDelay.max) } satisfies LoopDelay);
      loopDelay.reset();
    }
  },
);
