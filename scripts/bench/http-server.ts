// The Convene instance under the HTTP benchmark, in a process of its own, built as src/main.ts
// builds it: the configuration from the environment (http.bench.ts sets CONVENE_… variables and
// DATABASE_URL/REDIS_URL; no TOML file, so a developer's ./convene.toml cannot change the figures),
// its logger at the configured level, and every request validator compiled before it reports ready,
// so that the compilation in the background does not fall into a measured run.
//
// Forked by http.bench.ts; answers `{type: 'ready', url}` over IPC and stops on `{type: 'close'}`.
// `{type: 'profile', name}` profiles the operation that follows, with BENCH_CPU_PROF (profiler.ts).
import { loadConfig } from '../../src/config/load.js';
import { createConvene } from '../../src/server.js';
import { startProfile, stopProfile } from './profiler.js';

if (!process.send) throw new Error('forked by http.bench.ts (with an IPC channel)');
const send = process.send.bind(process);

// one user starts one room thousands of times a second: the ticket caps (tested on their own) would
// make the start benchmark measure 429s
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
send({ type: 'ready', url: `http://127.0.0.1:${port}` });

let closing: Promise<void> | undefined;
function shutDown(): Promise<void> {
  closing ??= stopProfile()
    .then(() => convene.close())
    .then(() => process.exit(0));
  return closing;
}
process.on('message', (message: { type: string; name?: string }) => {
  if (message.type === 'close') void shutDown();
  if (message.type === 'profile') void startProfile(message.name ?? 'profile');
});
process.on('disconnect', () => void shutDown());
