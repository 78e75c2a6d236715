// One Convene instance for the media benchmark (media.bench.ts), in a process of its own so that
// its CPU time in /proc is Convene's alone (not the benchmark's, not Chromium's, not Janus's). Test
// app defaults (PGlite in memory, the test issuer) with `[media] janus_urls` set to the benchmark's
// Janus, given as the first argument.
//
// Answers `{type: 'ready', url}` once listening; on `room`, a fresh room of a logged-in owner and an
// invite code for its guests (`MediaRoom`); on `cpu`, its CPU time so far; stops on `close` or when
// the benchmark goes away.
// Started by the benchmark: fork('media-server.ts', [janusUrl], { execArgv: ['--import', 'tsx'] }).
import { insertInvite, insertRoom } from '../../test/support/invites.js';
import { startTestApp } from '../../test/support/test-app.js';
import { BENCH_LIMITS } from './bench-limits.js';
import { serveBenchmark } from './server-process.js';

export type MediaServerRequest = { type: 'room' } | { type: 'cpu' } | { type: 'close' };
/** `cpu`: process.cpuUsage() (µs, every thread), finer than /proc's 10 ms ticks for short phases. */
export type MediaServerAnswer = { type: 'ready'; url: string } | MediaRoom | { type: 'cpu'; cpu: NodeJS.CpuUsage };
export interface MediaRoom {
  type: 'room';
  roomId: string;
  /** The owner's access token (a moderator in the room), valid for an hour. */
  ownerToken: string;
  /** One invite code for every guest: each start with it is a participant of its own. */
  inviteCode: string;
}

if (!process.send) throw new Error('forked by scripts/bench/media.bench.ts (with an IPC channel)');
const send = process.send.bind(process);
const janusUrl = process.argv[2];
if (!janusUrl) throw new Error('the Janus WebSocket URL is the first argument');

const app = await startTestApp({ media: { janus_urls: [janusUrl] }, ...BENCH_LIMITS });
const owner = await app.login('bench-owner');
const ownerToken = await app.issuer.accessToken({ sub: `sub-${owner.name}` }, { expiresIn: 3600 });
send({ type: 'ready', url: app.url } satisfies MediaServerAnswer);

async function newRoom(): Promise<void> {
  const roomId = await insertRoom(app, owner);
  send({ type: 'room', roomId, ownerToken, inviteCode: await insertInvite(app, roomId, owner) } satisfies MediaServerAnswer);
}

serveBenchmark<MediaServerRequest>(
  () => app.close(),
  (request) => {
    if (request.type === 'room') void newRoom();
    if (request.type === 'cpu') send({ type: 'cpu', cpu: process.cpuUsage() } satisfies MediaServerAnswer);
  },
);
