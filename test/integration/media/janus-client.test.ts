/**
 * The Janus WebSocket client (src/media/janus/) against a real Janus in a network namespace of the
 * test's own (test/support/janus.ts): sessions, videoroom requests synchronous and asynchronous,
 * plugin errors, the keepalive against a short `session_timeout`, and losing Janus (killed, frozen)
 * and getting it back. Without root or /usr/bin/janus the file is skipped with the reason.
 */
import { randomInt } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { JanusConnection, type JanusConnectionEvent, type JanusConnectionOptions } from '../../../src/media/janus/connection.js';
import { JanusConnectionLostError, JanusError, JanusErrorCode, JanusTimeoutError } from '../../../src/media/janus/errors.js';
import type { JanusHandleEvent } from '../../../src/media/janus/handle.js';
import { createLogger } from '../../../src/logger.js';
import { janusUnavailable, useJanus, type TestJanus } from '../../support/janus.js';

if (janusUnavailable) console.warn(`test/integration/media/janus-client.test.ts skipped: ${janusUnavailable}`);

/** Janus drops a session after 1 s without a request; the clients here keep theirs alive every 200 ms. */
const SESSION_TIMEOUT_S = 1;
const QUICK = { keepaliveMs: 200, requestTimeoutMs: 2_000, reconnectFirstMs: 100, reconnectMaxMs: 400 };

/** Everything a listener was told, and a way to wait for the next thing matching. */
class Recorder<Event> {
  readonly events: Event[] = [];
  private waiters: Array<{ match: (event: Event) => boolean; resolve: (event: Event) => void }> = [];

  readonly listener = (event: Event): void => {
    this.events.push(event);
    for (const waiter of this.waiters.filter(({ match }) => match(event))) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve(event);
    }
  };

  /** The first event since `from` (an index into `events`) that matches, now or once it comes. */
  next(match: (event: Event) => boolean, from = 0): Promise<Event> {
    const seen = this.events.slice(from).find(match);
    return seen ? Promise.resolve(seen) : new Promise((resolve) => this.waiters.push({ match, resolve }));
  }
}

const opened: JanusConnection[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((connection) => connection.close()));
});

async function connected(janus: TestJanus, options: Partial<JanusConnectionOptions> = {}) {
  const connection = new JanusConnection({ url: janus.url, logger: createLogger('silent'), ...QUICK, ...options });
  opened.push(connection);
  const events = new Recorder<JanusConnectionEvent>();
  connection.listen(events.listener);
  await connection.connect();
  return { connection, events };
}

async function attached(connection: JanusConnection) {
  const events = new Recorder<JanusHandleEvent>();
  const handle = await connection.attach(events.listener);
  return { handle, events };
}

const roomId = () => randomInt(1, 2 ** 40);
const plugin = (match: (data: Record<string, unknown>) => boolean) => (event: JanusHandleEvent) => event.type === 'plugin' && match(event.data);

/** A minimal browser-like offer: one send-only Opus m-line, no candidates. */
const OFFER_SDP = [
  'v=0',
  'o=- 1 2 IN IP4 127.0.0.1',
  's=-',
  't=0 0',
  'a=group:BUNDLE 0',
  'm=audio 9 UDP/TLS/RTP/SAVPF 111',
  'c=IN IP4 0.0.0.0',
  'a=ice-ufrag:abcd',
  'a=ice-pwd:abcdefghijklmnopqrstuvwx',
  'a=ice-options:trickle',
  `a=fingerprint:sha-256 ${Array(32).fill('AB').join(':')}`,
  'a=setup:actpass',
  'a=mid:0',
  'a=sendonly',
  'a=rtcp-mux',
  'a=rtpmap:111 opus/48000/2',
  'a=ssrc:1 cname:test',
  '',
].join('\r\n');

describe.skipIf(janusUnavailable !== undefined)('Janus client', () => {
  const janus = useJanus({ sessionTimeoutS: SESSION_TIMEOUT_S });

  it('opens one session, and close() destroys it', async () => {
    const { connection, events } = await connected(janus);
    expect(connection.state).toBe('up');
    expect(events.events).toEqual([{ type: 'up', sessionId: connection.sessionId }]);
    expect(await janus.sessions()).toContain(connection.sessionId);
    const session = connection.sessionId;
    await connection.close();
    expect(connection.state).toBe('closed');
    expect(await janus.sessions()).not.toContain(session);
    await expect(connection.attach(() => undefined)).rejects.toBeInstanceOf(JanusConnectionLostError);
  });

  it('creates a room, finds it with exists and list, lets a publisher join, kicks it, destroys the room and detaches', async () => {
    const { connection } = await connected(janus);
    const { handle: admin } = await attached(connection);
    const { handle: publisher, events: publisherEvents } = await attached(connection);
    expect(await janus.handles()).toEqual(expect.arrayContaining([admin.id, publisher.id]));
    const room = roomId();

    expect((await admin.request({ request: 'create', room, publishers: 10 })).data).toMatchObject({ videoroom: 'created', room });
    expect((await admin.request({ request: 'exists', room })).data).toMatchObject({ exists: true });
    const { list } = (await admin.request({ request: 'list' })).data as { list: Array<{ room: number }> };
    expect(list.map((entry) => entry.room)).toContain(room);

    // asynchronous: `ack`, then an `event` with the same transaction
    const joined = await publisher.request({ request: 'join', ptype: 'publisher', room, id: 1, display: 'Bob' });
    expect(joined.data).toMatchObject({ videoroom: 'joined', room, id: 1 });
    expect((await admin.request({ request: 'listparticipants', room })).data.participants).toEqual([expect.objectContaining({ id: 1, display: 'Bob' })]);

    expect((await admin.request({ request: 'kick', room, id: 1 })).data).toMatchObject({ videoroom: 'success' });
    await publisherEvents.next(plugin((data) => data.leaving === 'ok' && data.reason === 'kicked'));

    expect((await admin.request({ request: 'destroy', room })).data).toMatchObject({ videoroom: 'destroyed', room });
    expect((await admin.request({ request: 'exists', room })).data).toMatchObject({ exists: false });

    await publisher.detach();
    await admin.detach();
    expect(await janus.handles()).not.toEqual(expect.arrayContaining([admin.id]));
    expect(await janus.handles()).not.toEqual(expect.arrayContaining([publisher.id]));
  });

  it('tells a handle in a destroyed room with an unasked plugin event', async () => {
    const { connection } = await connected(janus);
    const { handle: admin } = await attached(connection);
    const { handle: publisher, events } = await attached(connection);
    const room = roomId();
    await admin.request({ request: 'create', room, publishers: 10 });
    await publisher.request({ request: 'join', ptype: 'publisher', room, id: 1 });
    await admin.request({ request: 'destroy', room });
    expect(await events.next(plugin((data) => data.videoroom === 'destroyed'))).toMatchObject({ data: { room } });
  });

  it('rejects a plugin error with its code, synchronous (427 room exists) and asynchronous (426 no such room) alike', async () => {
    const { connection } = await connected(janus);
    const { handle } = await attached(connection);
    const room = roomId();
    await handle.request({ request: 'create', room, publishers: 10 });
    const exists = handle.request({ request: 'create', room, publishers: 10 });
    await expect(exists).rejects.toBeInstanceOf(JanusError);
    await expect(exists).rejects.toMatchObject({ code: JanusErrorCode.videoroomRoomExists, reason: expect.stringContaining(String(room)) });
    const missing = handle.request({ request: 'join', ptype: 'publisher', room: roomId() });
    await expect(missing).rejects.toMatchObject({ code: JanusErrorCode.videoroomNoSuchRoom });
    // the handle still works after a refusal
    expect((await handle.request({ request: 'destroy', room })).data).toMatchObject({ videoroom: 'destroyed' });
  });

  it('rejects a core error with its code (459: a handle Janus does not know)', async () => {
    const { connection } = await connected(janus);
    const { handle } = await attached(connection);
    await handle.detach();
    await expect(handle.request({ request: 'list' })).rejects.toMatchObject({ code: JanusErrorCode.noSuchHandle });
  });

  it("answers a publisher's offer with candidates of the namespace's address only, and takes trickles", async () => {
    const { connection } = await connected(janus);
    const { handle } = await attached(connection);
    const room = roomId();
    await handle.request({ request: 'create', room, publishers: 10 });
    await handle.request({ request: 'join', ptype: 'publisher', room, id: 1 });
    const configured = await handle.request({ request: 'configure', audio: true }, { type: 'offer', sdp: OFFER_SDP });
    expect(configured.data).toMatchObject({ configured: 'ok' });
    expect(configured.jsep?.type).toBe('answer');
    const candidates = configured.jsep!.sdp.split('\r\n').filter((line) => line.startsWith('a=candidate:'));
    expect(candidates.length).toBeGreaterThan(0);
    for (const candidate of candidates) expect(candidate.split(' ')[4]).toBe(janus.address);
    await handle.trickle({ candidate: `candidate:1 1 udp 2122260223 ${janus.peerAddress} 9 typ host`, sdpMid: '0', sdpMLineIndex: 0 });
    await handle.trickle({ completed: true });
    await handle.request({ request: 'destroy', room });
    await handle.detach();
    expect(await janus.handles()).not.toContain(handle.id);
  });

  it('keeps its session past the session_timeout with keepalives; without them Janus drops it and the connection goes down', async () => {
    const kept = await connected(janus);
    const { handle } = await attached(kept.connection);
    const dropped = await connected(janus, { keepaliveMs: 60_000 });
    const { events: droppedHandle } = await attached(dropped.connection);

    const down = await dropped.events.next((event) => event.type === 'down');
    expect(down).toMatchObject({ reason: expect.stringContaining('session_timeout') });
    // Janus may detach the session's handles before it sends `timeout`: either way the handle hears of its end
    await droppedHandle.next((event) => event.type === 'lost' || event.type === 'detached');

    // the connection that sent keepalives meanwhile still has its session and its handle
    expect(kept.connection.state).toBe('up');
    expect(await janus.sessions()).toContain(kept.connection.sessionId);
    expect((await handle.request({ request: 'list' })).data).toMatchObject({ videoroom: 'success' });
    expect(kept.events.events).toHaveLength(1);
  });

  it('close() leaves no session and no handle in Janus', async () => {
    const connections = await Promise.all([connected(janus), connected(janus)]);
    for (const { connection } of connections) await Promise.all([attached(connection), attached(connection)]);
    expect((await janus.handles()).length).toBeGreaterThanOrEqual(4);
    await Promise.all(connections.map(({ connection }) => connection.close()));
    expect(await janus.sessions()).toEqual([]);
    expect(await janus.handles()).toEqual([]);
  });
});

describe.skipIf(janusUnavailable !== undefined)('Janus client: losing Janus', () => {
  const janus = useJanus({ sessionTimeoutS: 60 });

  async function expectBack(connection: JanusConnection, events: Recorder<JanusConnectionEvent>, from: number) {
    const up = await events.next((event) => event.type === 'up', from);
    expect(connection.state).toBe('up');
    expect(await janus.sessions()).toContain((up as { sessionId: number }).sessionId);
    const { handle } = await attached(connection);
    expect((await handle.request({ request: 'exists', room: 1 })).data).toMatchObject({ exists: false });
  }

  it('Janus killed: handles are lost, pending requests reject, the connection goes down; Janus back: up with a new session', async () => {
    const { connection, events } = await connected(janus);
    const first = connection.sessionId;
    const a = await attached(connection);
    const b = await attached(connection);
    await janus.freeze(); // a request in flight when Janus dies
    const pending = expect(a.handle.request({ request: 'list' })).rejects.toBeInstanceOf(JanusConnectionLostError);
    await janus.stop();

    await pending;
    expect(await events.next((event) => event.type === 'down')).toMatchObject({ type: 'down' });
    expect(connection.state).toBe('down');
    await a.events.next((event) => event.type === 'lost');
    await b.events.next((event) => event.type === 'lost');
    await expect(connection.attach(() => undefined)).rejects.toBeInstanceOf(JanusConnectionLostError);
    const downAt = events.events.length;

    await janus.start();
    await expectBack(connection, events, downAt);
    expect(connection.sessionId).not.toBe(first);
    expect(events.events.filter((event) => event.type === 'down')).toHaveLength(1);
  });

  it('Janus frozen: a request times out; the keepalive times out and the connection goes down; thawed: up again', async () => {
    const { connection, events } = await connected(janus, { keepaliveMs: 100, requestTimeoutMs: 300 });
    const { events: handleEvents } = await attached(connection);
    // no keepalive during the test: only the request's own timeout fails it, and the connection stays up
    const patient = await connected(janus, { keepaliveMs: 60_000, requestTimeoutMs: 300 });
    const { handle } = await attached(patient.connection);
    await janus.freeze();
    try {
      await expect(handle.request({ request: 'list' })).rejects.toBeInstanceOf(JanusTimeoutError);
      expect(patient.connection.state).toBe('up');
      expect(await events.next((event) => event.type === 'down')).toMatchObject({ reason: expect.stringContaining('keepalive failed') });
      await handleEvents.next((event) => event.type === 'lost');
    } finally {
      janus.thaw();
    }
    await expectBack(connection, events, events.events.length);
    expect((await handle.request({ request: 'list' })).data).toMatchObject({ videoroom: 'success' });
  });

  it('Janus not there at connect(): it rejects, the connection is down and comes up once Janus starts', async () => {
    await janus.stop();
    const connection = new JanusConnection({ url: janus.url, logger: createLogger('silent'), ...QUICK });
    opened.push(connection);
    const events = new Recorder<JanusConnectionEvent>();
    connection.listen(events.listener);
    await expect(connection.connect()).rejects.toThrow();
    expect(connection.state).toBe('down');
    expect(events.events).toEqual([{ type: 'down', reason: expect.any(String) }]);
    await janus.start();
    await expectBack(connection, events, 1);
  });
});
