// The Convene instance under the soak (scripts/soak/soak-driver.ts), in a process of its own: built
// as test/support/test-app.ts builds one (the test issuer, a fresh database: PGlite in memory, or a
// new database on DATABASE_URL's server, dropped on close; REDIS_URL's Redis when set), but with a
// logger at `warn` whose entries are counted, since the soak asserts the server logged no problem.
//
// Forked by server-process.ts with --expose-gc: answers `measure` with the memory after full
// collections, the open handles and the live timers; stops on `close` or when the driver goes away.
import { liveTimers } from './live-timers.js'; // first: it must see every timer set after it
import { Socket } from 'node:net';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/logger.js';
import { createConvene } from '../../src/server.js';
import { createTestDatabase } from '../../test/support/database.js';
import { startTestIssuer } from '../../test/support/oidc-issuer.js';
import type { ServerMeasure, ServerReady, ServerRequest, SoakUser } from './server-process.js';

if (!process.send || !global.gc) throw new Error('forked by scripts/soak/server-process.ts (with an IPC channel and --expose-gc)');
const send = process.send.bind(process);
const gc = global.gc;
const userCount = Number(process.argv[2] ?? 0);

const log = { warnings: 0, errors: 0, first: [] as string[] };
const logger = createLogger('warn', {
  write(line: string) {
    if ((JSON.parse(line) as { level: number }).level >= 50) log.errors++;
    else log.warnings++;
    if (log.first.length < 20) log.first.push(line.slice(0, 2_000));
  },
});

const issuer = await startTestIssuer({ clientId: 'convene' });
const database = await createTestDatabase();
const redisUrl = process.env.REDIS_URL || undefined;
const config = loadConfig({
  file: false,
  env: {},
  overrides: {
    // the driver's requests name their own source address (see freshSource in record.ts)
    http: { host: '127.0.0.1', port: 0, trust_proxy: 1 },
    database: { in_memory: true },
    oidc: { issuer: issuer.issuer, client_id: 'convene' },
    dev: { identity_provider: false },
    logging: { level: 'warn' },
    // every socket comes from 127.0.0.1 (1,000 at the default size), churning guests take a new
    // ticket every few seconds with their room's one invite code, and each room's owner and moderator
    // starts again and again: the caps would refuse them (the caps have tests of their own)
    signaling_caps: {
      tickets_per_user: 1_000_000,
      sockets_per_user: 1_000_000,
      tickets_per_invite_code: 1_000_000,
      tickets_per_source: 1_000_000,
      sockets_per_invite_code: 1_000_000,
      sockets_per_source: 1_000_000,
    },
    ...(redisUrl ? { redis: { url: redisUrl } } : {}),
  },
});
const convene = await createConvene(config, { database: database.database, logger });
const { port } = await convene.listen(0, '127.0.0.1');
await convene.warmUp();

const users: SoakUser[] = [];
for (let i = 0; i < userCount; i++) {
  const name = `soak${i}`;
  const sub = `sub-${name}`;
  const claims = { sub, email: `${name}@example.test`, given_name: `Soak ${i}`, family_name: 'Tester' };
  users.push({
    name,
    idToken: await issuer.idToken(claims, { expiresIn: 3_600 }),
    accessToken: await issuer.accessToken({ sub }, { expiresIn: 3_600 }),
  });
}
send({ type: 'ready', url: `http://127.0.0.1:${port}`, users } satisfies ServerReady);

const portOf = (url: string | undefined, fallback: number) => (url ? Number(new URL(url).port || fallback) : undefined);
const peers = { postgres: portOf(process.env.DATABASE_URL, 5432), redis: portOf(redisUrl, 6379) };

/** Open TCP sockets by what they connect (`_getActiveHandles` is undocumented, but the only list of handle objects). */
function socketsByPeer(): Record<string, number> {
  const handles = (process as unknown as { _getActiveHandles?: () => unknown[] })._getActiveHandles?.() ?? [];
  const counts: Record<string, number> = {};
  for (const handle of handles) {
    if (!(handle instanceof Socket) || handle.remotePort === undefined) continue; // pipes: stdio, IPC
    const peer =
      handle.localPort === port
        ? 'http_in'
        : handle.localPort === issuer.port
          ? 'issuer_in'
          : handle.remotePort === issuer.port
            ? 'issuer_out'
            : handle.remotePort === peers.postgres
              ? 'postgres'
              : handle.remotePort === peers.redis
                ? 'redis'
                : 'other';
    counts[peer] = (counts[peer] ?? 0) + 1;
  }
  return counts;
}

/** Live memory and handles: idle HTTP connections closed, then full collections until finalizers have run. */
async function measure(): Promise<ServerMeasure> {
  convene.server.closeIdleConnections();
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const resources: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) resources[kind] = (resources[kind] ?? 0) + 1;
  const { user, system } = process.cpuUsage();
  const cpuSeconds = (user + system) / 1e6;
  return { type: 'measure', memory: process.memoryUsage(), resources, sockets: socketsByPeer(), timers: liveTimers(), cpuSeconds, log };
}

let closing: Promise<void> | undefined;
function shutDown(): Promise<void> {
  closing ??= (async () => {
    await convene.close();
    await database.close();
    await issuer.close();
    process.exit(0);
  })();
  return closing;
}

process.on('message', (request: ServerRequest) => {
  if (request.type === 'close') void shutDown();
  if (request.type === 'measure') void measure().then((answer) => send(answer));
});
// the driver went away (finished or crashed): so does its server
process.on('disconnect', () => void shutDown());
