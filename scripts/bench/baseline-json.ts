// The HTTP stack's own baseline (issue 21): a bare `node:http` server that answers every `GET` with
// one fixed JSON value, serialised per request, and nothing else: no database, no framework, no
// authentication, no validation, no logging. Convene's answer to a request that runs no query
// (`GET /v1/users/me/tariff`) costs this plus what its stack adds; the benchmark measures both in
// the same run, the body being that very answer.
//
// Forked by http.bench.ts: `baseline-json.ts <JSON body>`; answers `{type: 'ready', url}` over IPC,
// stops on `{type: 'close'}`, profiles on `{type: 'profile', name}` with BENCH_CPU_PROF (profiler.ts).
import { createServer } from 'node:http';
import { startProfile, stopProfile } from './profiler.js';
import { serveBenchmark } from './server-process.js';

if (!process.send) throw new Error('forked by http.bench.ts (with an IPC channel)');
const send = process.send.bind(process);
const body: unknown = JSON.parse(process.argv[2] ?? 'null');

const server = createServer((req, res) => {
  if (req.method !== 'GET') {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
});
server.keepAliveTimeout = 65_000; // as Convene's
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('the JSON baseline server has no address');
  send({ type: 'ready', url: `http://127.0.0.1:${address.port}` });
});

serveBenchmark<{ type: string; name?: string }>(
  async () => {
    await stopProfile();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  },
  (message) => {
    if (message.type === 'profile') void startProfile(message.name ?? 'json baseline');
  },
);
