/**
 * The typed signaling client (packages/client) against a real instance: it starts rooms through the typed
 * HTTP client (every answer checked against the contract), opens the socket with the ticket on
 * Node's global WebSocket and on the `ws` package's, and validates every frame (`validate: true`).
 * Covered: typed commands and events, the three answers to `join` and a refused join, waits that
 * time out, abort or meet a closing socket, close codes both ways, refusals of the opening (what each
 * WebSocket can know of them), the accepted protocol, resumption, and what validation catches (a
 * stand-in server sends the frames the real one never would).
 */
import WsWebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import type { Middleware } from 'openapi-fetch';
import { validateHandshakeError } from '../../../generated/signaling/validators.js';
import {
  connectSignaling,
  createHttpClient,
  PROTOCOL_FAILURE_CLOSE,
  SignalingClosedError,
  SignalingCommandError,
  SignalingConnectError,
  SignalingProtocolError,
  SignalingStartError,
  SignalingTimeoutError,
  signalingUrl,
  startSignaling,
  type ConveneHttpClient,
  type SignalingConnection,
  type StartOptions,
  type WebSocketConstructor,
} from '../../../packages/client/src/index.js';
import { checkResponse, operationFor } from '../../support/contract.js';
import { DEFAULT_PROTOCOL, startTicket, type Starter } from '../../support/signaling-client.js';
import { useSignalingRooms } from '../../support/signaling-rooms.js';
import { standIn } from '../../support/signaling-stand-in.js';
import { freshSource } from '../../support/signaling.js';
import type { TestApp } from '../../support/test-app.js';

/** `solo` lets one participant in. */
const { app, room, login } = useSignalingRooms({ solo: { quotas: { room_participant_limit: 1 } } });

const contractCheck: Middleware = {
  async onResponse({ request, response, schemaPath }) {
    const body = await response.clone().text();
    checkResponse(operationFor(request.method, schemaPath), { status: response.status, contentType: response.headers.get('content-type'), body });
    return response;
  },
};

/**
 * The package's HTTP client for an instance, every answer checked against the contract; each request
 * from a fresh source address (the start's rate limits count per source, in Redis across runs).
 */
function httpClient(instance: TestApp, token?: string): ConveneHttpClient {
  const fromFreshSource: typeof fetch = (input, init) => {
    const request = new Request(input, init);
    request.headers.set('x-forwarded-for', freshSource());
    return fetch(request);
  };
  const http = createHttpClient({ baseUrl: `${instance.url}/v1`, token, fetch: fromFreshSource });
  http.use(contractCheck);
  return http;
}

const connections: SignalingConnection[] = [];
afterEach(async () => {
  await Promise.all(connections.splice(0).map((connection) => connection.close()));
});
const kept = <C extends SignalingConnection>(connection: C): C => {
  connections.push(connection);
  return connection;
};

/** The typed client's start for a fixture's starter (a user's token, or a guest's invite code), validating every frame. */
async function start(starter: Starter, options: Partial<StartOptions> = {}, instance: TestApp = app) {
  const guest = 'inviteCode' in starter;
  const http = httpClient(instance, guest ? undefined : starter.token);
  return kept(
    await startSignaling(http, {
      url: instance.url,
      roomId: starter.roomId,
      ...(guest ? { inviteCode: starter.inviteCode } : {}),
      validate: true,
      ...options,
    }),
  );
}

/** The joined participant's `join_success` frame, failing on any other answer. */
async function joined(connection: SignalingConnection, name: string) {
  const answer = await connection.join(name, { timeoutMs: 3_000 });
  if (answer.result !== 'join_success') throw new Error(`${name} got ${answer.result}`);
  return answer.frame;
}

const implementations: Array<[string, WebSocketConstructor | undefined]> = [
  ["Node's global WebSocket", undefined],
  ["the ws package's WebSocket", WsWebSocket],
];

describe.each(implementations)('on %s', (_name, WebSocket) => {
  it('joins two participants, starts a countdown and both get `started`, each frame typed and valid', async () => {
    const { moderator, guest } = await room();
    const alice = await start(moderator, { WebSocket });
    expect(alice.protocol).toBe(DEFAULT_PROTOCOL);
    const aliceJoined = await joined(alice, 'Alice');
    expect(aliceJoined.payload).toMatchObject({ display_name: 'Alice', role: 'moderator', is_room_owner: true, participants: [] });

    const seen: string[] = [];
    const unsubscribe = alice.on('control', 'joined', (frame) => seen.push(frame.payload.control.display_name));
    const bob = await start(guest, { WebSocket });
    const bobJoined = await joined(bob, 'Bob');
    expect(bobJoined.payload.participants.map((participant) => participant.id)).toEqual([aliceJoined.payload.id]);
    await expect.poll(() => seen).toEqual(['Bob']);
    unsubscribe();

    const started = Promise.all([alice.next('timer', 'started', { timeoutMs: 3_000 }), bob.next('timer', 'started', { timeoutMs: 3_000 })]);
    alice.send('timer', { action: 'start', kind: 'countdown', duration: 60, title: 'Break', enable_ready_check: false });
    const [forAlice, forBob] = await started;
    expect(forAlice.payload).toMatchObject({ message: 'started', kind: 'countdown', title: 'Break', ready_check_enabled: false });
    expect(Date.parse(forAlice.payload.ends_at!) - Date.parse(forAlice.payload.started_at)).toBe(60_000);
    expect(forBob.payload).toEqual(forAlice.payload);

    // an unsubscribed handler hears nothing more
    const carl = await start((await room()).moderator, { WebSocket });
    await joined(carl, 'Carl');
    expect(seen).toEqual(['Bob']);
  });
});

describe('join', () => {
  it('answers join_blocked when the room is full, and rejects a refused name with the control error', async () => {
    const { moderator, guest } = await room({ tariff: 'solo' });
    await joined(await start(moderator), 'Alice');
    const bob = await start(guest);
    const answer = await bob.join('Bob', { timeoutMs: 3_000 });
    expect(answer.result).toBe('join_blocked');
    expect(answer.frame.payload).toEqual({ message: 'join_blocked', reason: 'participant_limit_reached' });

    const carl = await start((await room()).moderator);
    const refused = await carl.join('   ', { timeoutMs: 3_000 }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(SignalingCommandError);
    expect((refused as SignalingCommandError).error).toBe('invalid_username');
    expect((refused as SignalingCommandError).frame.namespace).toBe('control');
  });

  it('answers in_waiting_room in a room with a waiting room; once accepted, enterRoom resolves with join_success', async () => {
    const { moderator, guest } = await room({ waitingRoom: true });
    const alice = await start(moderator);
    await joined(alice, 'Alice');
    const bob = await start(guest);

    // `next` waits for frames after the call: wait before the frame can come
    const waiting = alice.next('moderation', 'joined_waiting_room', { timeoutMs: 3_000 });
    const answer = await bob.join('Bob', { timeoutMs: 3_000 });
    expect(answer).toMatchObject({ result: 'in_waiting_room', frame: { namespace: 'moderation', payload: { message: 'in_waiting_room' } } });
    const { payload: bobWaiting } = await waiting;
    expect(bobWaiting.control.display_name).toBe('Bob');

    const accepted = bob.next('moderation', 'accepted', { timeoutMs: 3_000 });
    alice.send('moderation', { action: 'accept', target: bobWaiting.id });
    await accepted;
    const entered = await bob.enterRoom({ timeoutMs: 3_000 });
    expect(entered.payload).toMatchObject({ id: bobWaiting.id, display_name: 'Bob', role: 'guest' });
  });

  it("sends the moderators' waiting-room switch and renaming, and reads their events typed", async () => {
    const { moderator, guest } = await room({ waitingRoom: true });
    const alice = await start(moderator);
    await joined(alice, 'Alice');
    const bob = await start(guest);
    const arrived = alice.next('moderation', 'joined_waiting_room', { timeoutMs: 3_000 });
    expect((await bob.join('Bob', { timeoutMs: 3_000 })).result).toBe('in_waiting_room');
    await arrived;

    const [disabled, accepted] = [
      alice.next('moderation', 'waiting_room_disabled', { timeoutMs: 3_000 }),
      bob.next('moderation', 'accepted', { timeoutMs: 3_000 }),
    ];
    alice.send('moderation', { action: 'disable_waiting_room' });
    await Promise.all([disabled, accepted]);
    const { payload: entered } = await bob.enterRoom({ timeoutMs: 3_000 });

    const renamed = bob.next('moderation', 'display_name_changed', { timeoutMs: 3_000 });
    alice.send('moderation', { action: 'change_display_name', target: entered.id, new_name: 'Robert' });
    expect((await renamed).payload).toEqual({
      message: 'display_name_changed',
      target: entered.id,
      issued_by: expect.any(String),
      old_name: 'Bob',
      new_name: 'Robert',
    });
  });
});

describe('waiting for events', () => {
  it('times out, aborts, and answers echo with the payload; events() yields frames in order and ends when the socket closes', async () => {
    const alice = await start((await room()).moderator);
    await expect(alice.next('timer', 'started', { timeoutMs: 50 })).rejects.toThrow(new SignalingTimeoutError('no timer started within 50 ms'));
    const abort = new AbortController();
    const aborted = alice.next('timer', 'started', { signal: abort.signal });
    abort.abort(new Error('gave up'));
    await expect(aborted).rejects.toThrow('gave up');

    const frames = alice.events();
    alice.send('echo', { action: 'ping', n: 1 });
    alice.send('echo', { action: 'ping', n: 2 });
    const echoed = await alice.next('echo', '*', { timeoutMs: 3_000 });
    expect(echoed.payload).toEqual({ action: 'ping', n: 1 });
    expect((await frames.next()).value).toMatchObject({ namespace: 'echo', payload: { action: 'ping', n: 1 } });
    expect((await frames.next()).value).toMatchObject({ namespace: 'echo', payload: { action: 'ping', n: 2 } });
    await alice.close();
    expect(await frames.next()).toEqual({ value: undefined, done: true });
  });
});

describe('listeners', () => {
  it('leaves none behind: not of a wait that resolved, timed out or was aborted, a refused join, or an iteration ended by return or by its signal', async () => {
    const alice = await start((await room()).moderator);
    // what the connection holds per subscriber (private: nothing else would tell a leak)
    const held = () => ({ listeners: alice['listeners'].size, waits: alice['waits'].size });
    expect(held()).toEqual({ listeners: 0, waits: 0 });

    const echoed = alice.next('echo', '*', { timeoutMs: 3_000 });
    alice.send('echo', { action: 'ping' });
    await echoed;
    await expect(alice.next('timer', 'started', { timeoutMs: 10 })).rejects.toThrow(SignalingTimeoutError);
    const abort = new AbortController();
    const aborted = alice.next('timer', 'started', { signal: abort.signal });
    abort.abort(new Error('gave up'));
    await expect(aborted).rejects.toThrow('gave up');
    await expect(alice.join('   ', { timeoutMs: 3_000 })).rejects.toThrow(SignalingCommandError);
    const frames = alice.events();
    alice.send('echo', { action: 'ping' });
    await frames.next();
    await frames.return!();
    // aborted while nobody iterates: it stops collecting frames at once
    const stop = new AbortController();
    const abandoned = alice.events({ signal: stop.signal });
    stop.abort();
    expect(held()).toEqual({ listeners: 0, waits: 0 });
    expect(await abandoned.next()).toEqual({ value: undefined, done: true });
  });
});

describe('closing', () => {
  it('closes with the code and reason given; the others see the participant leave', async () => {
    const { moderator, guest } = await room();
    const alice = await start(moderator);
    const aliceJoined = await joined(alice, 'Alice');
    const bob = await start(guest);
    await joined(bob, 'Bob');
    const left = bob.next('control', 'left', { timeoutMs: 3_000 });
    expect(await alice.close(4000, 'bye')).toEqual({ code: 4000, reason: 'bye', wasClean: true });
    expect((await left).payload).toEqual({ message: 'left', id: aliceJoined.payload.id, reason: 'quit' });
    expect(() => alice.send('echo', { action: 'ping' })).toThrow(SignalingClosedError);
    await expect(alice.next('echo', '*')).rejects.toThrow(SignalingClosedError);
  });

  it("fails a pending wait when the server closes the socket (an instance's shutdown, 1001), with the close", async () => {
    const other = await app.withConfig({});
    let stopped = false;
    try {
      const alice = await start((await room()).moderator, {}, other);
      await joined(alice, 'Alice');
      const pending = alice.next('timer', 'started').catch((err: unknown) => err);
      await other.close();
      stopped = true;
      const failure = await pending;
      expect(failure).toBeInstanceOf(SignalingClosedError);
      expect((failure as SignalingClosedError).close?.code).toBe(1001);
      expect((await alice.closed).code).toBe(1001);
    } finally {
      if (!stopped) await other.close();
    }
  });
});

describe('opening', () => {
  it('echoes the protocol offered, the first accepted of several', async () => {
    const { moderator } = await room();
    expect((await start(moderator, { protocol: 'opentalk-signaling-json-v1.0' })).protocol).toBe('opentalk-signaling-json-v1.0');
    expect((await start(moderator, { protocol: ['unknown-v9', 'k3k-signaling-json-v1.0', DEFAULT_PROTOCOL] })).protocol).toBe('k3k-signaling-json-v1.0');
  });

  it('rejects a used ticket with a SignalingConnectError: the status and error body with ws, an explanation with the global WebSocket', async () => {
    const { moderator } = await room();
    const { ticket } = await startTicket(app, moderator);
    kept(await connectSignaling({ url: app.url, ticket, validate: true }));

    const withWs = await connectSignaling({ url: app.url, ticket, WebSocket: WsWebSocket }).catch((err: unknown) => err);
    expect(withWs).toBeInstanceOf(SignalingConnectError);
    const refusal = withWs as SignalingConnectError;
    expect(refusal.status).toBe(401);
    expect(refusal.code).toBe('invalid_ticket');
    expect(validateHandshakeError(refusal.body), JSON.stringify(validateHandshakeError.errors)).toBe(true);
    expect(refusal.message).toMatch(/^the server refused the socket with HTTP 401 invalid_ticket: /);

    const withGlobal = await connectSignaling({ url: app.url, ticket }).catch((err: unknown) => err);
    expect(withGlobal).toBeInstanceOf(SignalingConnectError);
    expect((withGlobal as SignalingConnectError).status).toBeUndefined();
    expect((withGlobal as SignalingConnectError).message).toMatch(
      /^the socket closed \(1006\) before it opened: the server refused it \(a missing, used, expired/,
    );
  });

  it('rejects an unknown protocol (400 invalid_protocol, read with ws) and an unreachable server', async () => {
    const { ticket } = await startTicket(app, (await room()).moderator);
    const unknown = await connectSignaling({ url: app.url, ticket, protocol: 'unknown-v9', WebSocket: WsWebSocket }).catch((err: unknown) => err);
    expect(unknown).toMatchObject({ name: 'SignalingConnectError', status: 400, code: 'invalid_protocol' });

    const unreachable = await connectSignaling({ url: 'http://127.0.0.1:1', ticket, WebSocket: WsWebSocket }).catch((err: unknown) => err);
    expect(unreachable).toBeInstanceOf(SignalingConnectError);
    expect((unreachable as Error).message).toContain('ECONNREFUSED');
  });

  it('rejects a refused start with a SignalingStartError, and resumes a session with its resumption token', async () => {
    const owner = await login('owner');
    const refused = await startSignaling(httpClient(app, owner.accessToken), { url: app.url, roomId: crypto.randomUUID() }).catch((err: unknown) => err);
    expect(refused).toMatchObject({ name: 'SignalingStartError', status: 404, code: 'not_found' });

    const { moderator } = await room();
    const alice = await start(moderator);
    const first = await joined(alice, 'Alice');
    await alice.close();
    // the closed session lets go of its token a moment later: until then the start answers session_running
    for (let attempt = 0; ; attempt++) {
      try {
        const again = await start(moderator, { resumption: alice.resumption });
        expect((await joined(again, 'Alice')).payload.id).toBe(first.payload.id);
        break;
      } catch (err) {
        if (attempt === 100 || !(err instanceof SignalingStartError) || err.code !== 'session_running') throw err;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  });
});

describe('starting without a WebSocket', () => {
  it('throws before the start: no request is sent, so no ticket is spent', async () => {
    const { moderator } = await room();
    if ('inviteCode' in moderator) throw new Error('the moderator starts with a token');
    const requests: string[] = [];
    const http = createHttpClient({
      baseUrl: `${app.url}/v1`,
      token: moderator.token,
      fetch: (input, init) => {
        const request = new Request(input, init);
        request.headers.set('x-forwarded-for', freshSource());
        requests.push(request.url);
        return fetch(request);
      },
    });
    const global = globalThis as { WebSocket?: unknown };
    const saved = global.WebSocket;
    delete global.WebSocket;
    try {
      const failed = await startSignaling(http, { url: app.url, roomId: moderator.roomId }).catch((err: unknown) => err);
      expect(failed).toBeInstanceOf(TypeError);
      expect(requests).toEqual([]);
    } finally {
      global.WebSocket = saved;
    }
  });
});

describe('signalingUrl', () => {
  it('turns a server URL into the socket URL', () => {
    expect(signalingUrl('http://localhost:11311')).toBe('ws://localhost:11311/signaling');
    expect(signalingUrl('https://meet.example.org/')).toBe('wss://meet.example.org/signaling');
    expect(signalingUrl('wss://meet.example.org/convene/')).toBe('wss://meet.example.org/convene/signaling');
    expect(signalingUrl('ws://localhost:11311/signaling')).toBe('ws://localhost:11311/signaling');
    expect(() => signalingUrl('ftp://localhost')).toThrow('not a server URL: ftp://localhost/ (http, https, ws or wss)');
  });
});

describe('validation', () => {
  const timestamp = new Date().toISOString();
  const brokenStarted = JSON.stringify({ namespace: 'timer', timestamp, payload: { message: 'started', kind: 'hourglass' } });

  it.each([
    ['a frame that breaks its schema', brokenStarted, 'server frame breaks its schema'],
    [
      'an event the contract does not have',
      JSON.stringify({ namespace: 'timer', timestamp, payload: { message: 'paused' } }),
      'server sent an event the contract does not have',
    ],
  ])('with validate, fails the waits and closes with 4002 on %s', async (_what, frame, problem) => {
    const server = await standIn(frame);
    try {
      const connection = await connectSignaling({ url: server.url, ticket: 'any', validate: true });
      const waiting = connection.next('timer', '*', { timeoutMs: 3_000 });
      connection.send('echo', { action: 'go' });
      await expect(waiting).rejects.toThrow(problem);
      expect(connection.failure).toBeInstanceOf(SignalingProtocolError);
      expect((await connection.closed).code).toBe(PROTOCOL_FAILURE_CLOSE);
      await expect(connection.next('timer', '*')).rejects.toBe(connection.failure);
    } finally {
      await server.close();
    }
  });

  it('without validate, delivers a frame that breaks its schema as it came', async () => {
    const server = await standIn(brokenStarted);
    try {
      const connection = kept(await connectSignaling({ url: server.url, ticket: 'any' }));
      const waiting = connection.next('timer', 'started', { timeoutMs: 3_000 });
      connection.send('echo', { action: 'go' });
      expect(await waiting).toEqual(JSON.parse(brokenStarted));
      expect(connection.failure).toBeUndefined();
    } finally {
      await server.close();
    }
  });

  it.each([false, true])('fails on a frame that is no JSON (validate: %s)', async (validate) => {
    const text = '{"namespace": "timer", ';
    const server = await standIn(text);
    try {
      const connection = await connectSignaling({ url: server.url, ticket: 'any', validate });
      const waiting = connection.next('timer', '*', { timeoutMs: 3_000 });
      connection.send('echo', { action: 'go' });
      const failure = await waiting.catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(SignalingProtocolError);
      expect(failure).toMatchObject({ message: `server frame is no JSON: ${text}`, frame: text });
      expect((await connection.closed).code).toBe(PROTOCOL_FAILURE_CLOSE);
    } finally {
      await server.close();
    }
  });
});
