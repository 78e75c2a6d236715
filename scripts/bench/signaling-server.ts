// The server side of the signaling benchmark (scripts/bench/signaling.ts), in a process of its
// own so that its memory is the server's alone: one or two Convene instances over one database
// (PGlite in memory, or PostgreSQL with DATABASE_URL) and, with `--redis`, REDIS_URL's Redis. It
// seeds a room of a logged-in owner with an invite code, tells the parent where everything is,
// and answers `memory` requests with process.memoryUsage() after a full garbage collection.
// Started by the benchmark: fork('signaling-server.ts', ['<instances>', '--redis'?], { execArgv: ['--import', 'tsx', '--expose-gc'] }).
import { insertInvite, insertRoom } from '../../test/support/invites.js';
import { startTestApp, type TestApp } from '../../test/support/test-app.js';

/** What the benchmark learns when the server is up. */
export interface ServerReady {
  type: 'ready';
  urls: string[];
  roomId: string;
  /** The room owner's access token (a moderator in the room), valid for an hour. */
  ownerToken: string;
  /** One invite code for every guest: each start with it is a participant of its own. */
  inviteCode: string;
}
export type ServerRequest = { type: 'memory' } | { type: 'close' };
export interface ServerMemory {
  type: 'memory';
  usage: NodeJS.MemoryUsage;
}

const instances = Number(process.argv[2] ?? '1');
const redisUrl = process.argv.includes('--redis') ? process.env.REDIS_URL : undefined;
if (!process.send || !global.gc) throw new Error('run by scripts/bench/signaling.ts (with an IPC channel and --expose-gc)');
const send = process.send.bind(process);
const gc = global.gc;

const apps: TestApp[] = [await startTestApp(redisUrl ? { redis: { url: redisUrl } } : {})];
while (apps.length < instances) apps.push(await apps[0]!.withConfig({}));
const [first] = apps as [TestApp];

const owner = await first.login('bench-owner');
const roomId = await insertRoom(first, owner);
const ready: ServerReady = {
  type: 'ready',
  urls: apps.map((app) => app.url),
  roomId,
  ownerToken: await first.issuer.accessToken({ sub: `sub-${owner.name}` }, { expiresIn: 3600 }),
  inviteCode: await insertInvite(first, roomId, owner),
};
send(ready);

let closing: Promise<void> | undefined;
function close(): Promise<void> {
  closing ??= (async () => {
    // the extra instances first: the first owns the database and the issuer
    for (const app of apps.slice(1).reverse()) await app.close();
    await first.close();
    process.exit(0);
  })();
  return closing;
}

process.on('message', (request: ServerRequest) => {
  if (request.type === 'close') void close();
  if (request.type === 'memory') {
    // twice: the first collection's finalizers free more for the second
    gc();
    gc();
    const answer: ServerMemory = { type: 'memory', usage: process.memoryUsage() };
    send(answer);
  }
});
// the benchmark went away (finished or crashed): so does its server
process.on('disconnect', () => void close());
