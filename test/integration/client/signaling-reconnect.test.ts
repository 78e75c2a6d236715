/**
 * The typed signaling client's reconnect (`startSignaling({ reconnect })`) against a real instance.
 * The socket goes through a TCP relay (test/support/tcp-cut.ts) that cuts it: either the server
 * notices at once, or it keeps the session running for a while (a network that failed between the
 * two), so that the start with the resumption token answers `session_running` until it is released.
 * The HTTP requests go to the instance directly. Covered: coming back as the same participant with
 * the events in order, both WebSockets; the bound on attempts; a refusal that ends at once; a
 * server going away; no reconnect after the caller's close, during reconnecting, or after a kick.
 */
import WsWebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createHttpClient,
  SignalingClosedError,
  SignalingStartError,
  startSignaling,
  type ConnectionEvent,
  type ConveneHttpClient,
  type ReconnectOptions,
  type SignalingConnection,
  type StartedSignaling,
  type WebSocketConstructor,
} from '../../../packages/client/src/index.js';
import type { ServerEvent } from '../../../generated/signaling/types.js';
import type { Starter } from '../../support/signaling-client.js';
import { useSignalingRooms } from '../../support/signaling-rooms.js';
import { dbOf, freshSource } from '../../support/signaling.js';
import { tcpCut, type TcpCut } from '../../support/tcp-cut.js';
import type { TestApp } from '../../support/test-app.js';

const { app, room } = useSignalingRooms();

/** Quick attempts for a test: the defaults wait 250 ms and more. */
const QUICK: ReconnectOptions = { initialDelayMs: 20, maxDelayMs: 100, maxAttempts: 100, joinTimeoutMs: 3_000 };

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function relay(instance: TestApp = app): Promise<TcpCut> {
  const cut = await tcpCut(instance.url);
  cleanups.push(() => cut.close());
  return cut;
}

/** Each start request's path and answer status, in order. */
type StartLog = Array<{ path: string; status: number; resumption: unknown }>;

/** The client's HTTP client, each request from a fresh source address (the start's limits count per source, in Redis across runs). */
function httpClient(instance: TestApp, starts: StartLog, token?: string): ConveneHttpClient {
  const logged: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    request.headers.set('x-forwarded-for', freshSource());
    const { resumption } = (await request
      .clone()
      .json()
      .catch(() => ({}))) as { resumption?: unknown };
    const response = await fetch(request);
    starts.push({ path: new URL(request.url).pathname, status: response.status, resumption });
    return response;
  };
  return createHttpClient({ baseUrl: `${instance.url}/v1`, token, fetch: logged });
}

interface Started {
  connection: StartedSignaling;
  /** Every connection event, in order. */
  events: ConnectionEvent[];
  /** Every frame as `namespace message`, in order. */
  frames: string[];
  starts: StartLog;
}

/** Starts with the typed client (the socket through `via` when given), recording its events and frames. */
async function start(
  starter: Starter,
  options: { via?: TcpCut; reconnect?: ReconnectOptions | boolean; WebSocket?: WebSocketConstructor; instance?: TestApp } = {},
): Promise<Started> {
  const instance = options.instance ?? app;
  const guest = 'inviteCode' in starter;
  const starts: StartLog = [];
  const connection = await startSignaling(httpClient(instance, starts, guest ? undefined : starter.token), {
    url: options.via?.url ?? instance.url,
    roomId: starter.roomId,
    ...(guest ? { inviteCode: starter.inviteCode } : {}),
    reconnect: options.reconnect ?? QUICK,
    validate: true,
    WebSocket: options.WebSocket,
  });
  cleanups.push(() => connection.close());
  const events: ConnectionEvent[] = [];
  connection.onConnectionEvent((event) => events.push(event));
  const frames: string[] = [];
  connection.onFrame((frame) => frames.push(describeFrame(frame)));
  return { connection, events, frames, starts };
}

const describeFrame = (frame: ServerEvent) =>
  `${frame.namespace} ${(frame.payload as { message?: string }).message ?? (frame.payload as { action?: string }).action}`;

async function joined(connection: SignalingConnection, name: string) {
  const answer = await connection.join(name, { timeoutMs: 3_000 });
  if (answer.result !== 'join_success') throw new Error(`${name} got ${answer.result}`);
  return answer.frame.payload;
}

const types = (events: ConnectionEvent[]) => events.map((event) => event.type);

const implementations: Array<[string, WebSocketConstructor | undefined]> = [
  ["Node's global WebSocket", undefined],
  ["the ws package's WebSocket", WsWebSocket],
];

describe.each(implementations)('on %s', (_name, WebSocket) => {
  it('comes back as the same participant after a drop the server notices late: reconnecting (session_running meanwhile), reconnected, the frames in order', async () => {
    const { moderator, guest } = await room();
    const via = await relay();
    const alice = await start(moderator, { via, WebSocket });
    const before = await joined(alice.connection, 'Alice');
    const firstToken = alice.connection.resumption;
    const bob = await start(guest);
    const bobId = (await joined(bob.connection, 'Bob')).id;
    await expect.poll(() => alice.frames).toContain('control joined');
    const frames = alice.connection.events();
    const pending = alice.connection.next('timer', 'started').catch((err: unknown) => err);
    const bobSees = bob.connection.events();

    via.cut({ holdServerSide: true });
    // the server still holds the session: every start with the token answers session_running
    await expect.poll(() => alice.events.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(3);
    const failed = await pending;
    expect(failed).toBeInstanceOf(SignalingClosedError);
    expect((failed as SignalingClosedError).message).toMatch(/^the socket closed \(1006\) before timer started; reconnecting$/);
    expect(() => alice.connection.send('echo', { action: 'ping' })).toThrow('cannot send echo ping: the socket is reconnecting');
    via.release();

    await expect.poll(() => types(alice.events).at(-1), { timeout: 5_000 }).toBe('reconnected');
    const retries = alice.events.slice(0, -1);
    expect(new Set(types(retries))).toEqual(new Set(['reconnecting']));
    expect(retries.map((event) => (event as { attempt: number }).attempt)).toEqual(retries.map((_event, index) => index + 1));
    expect(retries[0]).toMatchObject({ cause: { code: 1006 } });
    expect((retries[1] as { cause: unknown }).cause).toMatchObject({ name: 'SignalingStartError', status: 400, code: 'session_running' });
    const back = alice.events.at(-1) as Extract<ConnectionEvent, { type: 'reconnected' }>;
    expect(back).toMatchObject({ attempt: retries.length, resumed: true });
    if (back.join?.result !== 'join_success') throw new Error(`rejoined with ${back.join?.result}`);
    expect(back.join.frame.payload).toMatchObject({ id: before.id, display_name: 'Alice', role: 'moderator' });
    expect(back.join.frame.payload.participants.map((participant) => participant.id)).toEqual([bobId]);
    // every start after the first presented the token of the one before; the last one was answered 200
    expect(alice.starts.map((start) => start.status)).toEqual([200, ...retries.slice(1).map(() => 400), 200]);
    expect(alice.starts[1]?.resumption).toBe(firstToken);
    expect(alice.connection.resumption).not.toBe(firstToken);

    const started = Promise.all([
      alice.connection.next('timer', 'started', { timeoutMs: 3_000 }),
      bob.connection.next('timer', 'started', { timeoutMs: 3_000 }),
    ]);
    alice.connection.send('timer', { action: 'start', kind: 'stopwatch', enable_ready_check: false });
    await started;
    expect(alice.frames).toEqual(['control join_success', 'control joined', 'control join_success', 'timer started']);
    // events() went on across the drop
    expect(describeFrame((await frames.next()).value)).toBe('control join_success');
    expect(describeFrame((await frames.next()).value)).toBe('timer started');
    // the others saw Alice leave and come back with her id
    const seen: string[] = [];
    for await (const frame of bobSees) {
      seen.push(`${describeFrame(frame)} ${(frame.payload as { id?: string }).id ?? ''}`.trim());
      if (frame.namespace === 'timer') break;
    }
    expect(seen).toEqual([`control left ${before.id}`, `control joined ${before.id}`, 'timer started']);
  });
});

describe('bounds', () => {
  it('gives up after exactly maxAttempts while the server keeps answering session_running: disconnected with the last failure', async () => {
    const { moderator } = await room();
    const via = await relay();
    const alice = await start(moderator, { via, reconnect: { maxAttempts: 3, initialDelayMs: 10, maxDelayMs: 20 } });
    await joined(alice.connection, 'Alice');
    via.cut({ holdServerSide: true });
    const close = await alice.connection.closed;
    expect(close.code).toBe(1006);
    expect(types(alice.events)).toEqual(['reconnecting', 'reconnecting', 'reconnecting', 'disconnected']);
    expect(alice.events.slice(0, 3).map((event) => (event as { delayMs: number }).delayMs)).toEqual([
      expect.toSatisfy((ms: number) => ms >= 5 && ms <= 10),
      expect.toSatisfy((ms: number) => ms >= 10 && ms <= 20),
      expect.toSatisfy((ms: number) => ms >= 10 && ms <= 20),
    ]);
    const end = alice.events[3] as Extract<ConnectionEvent, { type: 'disconnected' }>;
    expect(end).toMatchObject({ reason: 'reconnect_failed', close: { code: 1006 } });
    expect(end.error).toBeInstanceOf(SignalingStartError);
    expect((end.error as SignalingStartError).code).toBe('session_running');
    expect(alice.starts.map((start) => start.status)).toEqual([200, 400, 400, 400]);
    await expect(alice.connection.next('echo', '*')).rejects.toThrow(SignalingClosedError);
  });

  it('ends at the first attempt when the start is refused for good (the room got a password meanwhile)', async () => {
    const { moderator, guest } = await room();
    await joined((await start(moderator)).connection, 'Alice');
    const via = await relay();
    const bob = await start(guest, { via, reconnect: { initialDelayMs: 400 } });
    await joined(bob.connection, 'Bob');
    await dbOf(app).updateTable('rooms').set({ password: 'secret' }).where('id', '=', guest.roomId).execute();
    via.cut();
    await bob.connection.closed;
    expect(types(bob.events)).toEqual(['reconnecting', 'disconnected']);
    const end = bob.events[1] as Extract<ConnectionEvent, { type: 'disconnected' }>;
    expect(end.reason).toBe('reconnect_failed');
    expect(end.error).toMatchObject({ name: 'SignalingStartError', status: 401, code: 'wrong_room_password' });
  });

  it('retries when the server goes away (1001), and gives up once the instance stays gone', async () => {
    const other = await app.withConfig({});
    let stopped = false;
    try {
      const alice = await start((await room()).moderator, { instance: other, reconnect: { maxAttempts: 2, initialDelayMs: 10, maxDelayMs: 20 } });
      await joined(alice.connection, 'Alice');
      await other.close();
      stopped = true;
      expect((await alice.connection.closed).code).toBe(1001);
      expect(types(alice.events)).toEqual(['reconnecting', 'reconnecting', 'disconnected']);
      expect(alice.events[0]).toMatchObject({ cause: { code: 1001 } });
      expect(alice.events[2]).toMatchObject({ reason: 'reconnect_failed', close: { code: 1001 } });
    } finally {
      if (!stopped) await other.close();
    }
  });
});

describe('no reconnect', () => {
  it("after the caller's close, nor after a kick (1000 from the server)", async () => {
    const { moderator, guest } = await room();
    const alice = await start(moderator);
    await joined(alice.connection, 'Alice');
    const bob = await start(guest);
    const bobId = (await joined(bob.connection, 'Bob')).id;

    const kicked = bob.connection.next('moderation', 'kicked', { timeoutMs: 3_000 });
    alice.connection.send('moderation', { action: 'kick', target: bobId });
    await kicked;
    expect((await bob.connection.closed).code).toBe(1000);
    expect(bob.events).toEqual([{ type: 'disconnected', reason: 'socket_closed', close: expect.objectContaining({ code: 1000 }) }]);

    expect((await alice.connection.close()).code).toBe(1000);
    expect(alice.events).toEqual([{ type: 'disconnected', reason: 'closed_by_client', close: expect.objectContaining({ code: 1000 }) }]);
  });

  it('once the caller closes while reconnecting: the attempts end', async () => {
    const { moderator } = await room();
    const via = await relay();
    const alice = await start(moderator, { via });
    await joined(alice.connection, 'Alice');
    via.cut({ holdServerSide: true });
    await expect.poll(() => alice.events.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(2);
    const close = await alice.connection.close();
    expect(close.code).toBe(1006);
    expect(alice.events.at(-1)).toEqual({ type: 'disconnected', reason: 'closed_by_client', close });
    expect(new Set(types(alice.events.slice(0, -1)))).toEqual(new Set(['reconnecting']));
    const attempts = alice.starts.length;
    via.release();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(alice.starts.length).toBe(attempts);
  });
});
