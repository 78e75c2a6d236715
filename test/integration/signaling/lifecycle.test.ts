/**
 * A socket's life beyond single frames: the size limits and the heartbeat must make sense at start;
 * the heartbeat drops a client that stops answering pings (and the room hears it left on
 * `timeout`), as does a client that stops reading what it is sent; shutting an instance down
 * closes its sockets with 1001, cuts those that do not answer, and refuses new ones without using
 * their tickets; and resumption: a dropped participant who starts again with its token gets its id
 * back, a token whose session still runs is refused, and a session whose token was taken is closed
 * with 1000. The instances here ping every 200 ms, drop after 1 s without pong (a margin for a busy
 * test process, whose own clients answer the pings) and refresh every 200 ms.
 */
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { connect, DEFAULT_PROTOCOL, joinRoom, SignalingClient, signalingUrl, startTicket, type Starter } from '../../support/signaling-client.js';
import { insertInvite, insertRoom, post, redisUrl, signalingConfig } from '../../support/signaling.js';
import { useTestApp, type TestApp } from '../../support/test-app.js';

const fastLiveness = { signaling: { ping_interval_ms: 200, pong_timeout_ms: 1_000, resumption_refresh_ms: 200 } };
/** The default heartbeat (a ping every 15 s, 20 s without pong): nothing the tests wait for. */
const defaultLiveness = { signaling: {} };

/** A client whose socket is no longer read: it answers no ping and takes none of what it is sent. */
function stopReading(client: SignalingClient): void {
  client.ws.pause();
}

describe('signaling lifecycle', () => {
  const app = useTestApp({ ...signalingConfig(), ...fastLiveness });

  async function room(on: TestApp = app): Promise<{ owner: Starter; guest: Starter }> {
    const user = await on.login('owner');
    const roomId = await insertRoom(on, user);
    return { owner: { roomId, token: user.accessToken }, guest: { roomId, inviteCode: await insertInvite(on, roomId, user) } };
  }

  describe('heartbeat', () => {
    it('drops a client that does not answer pings, and the room hears it left on timeout', async () => {
      const { owner, guest } = await room();
      const alice = await joinRoom(app, owner, 'Alice');
      const ws = new WebSocket(signalingUrl(app), [DEFAULT_PROTOCOL, `ticket#${(await startTicket(app, guest)).ticket}`], { autoPong: false });
      const mute = new SignalingClient(ws);
      await once(ws, 'open');
      mute.command('control', 'join', { display_name: 'Mute' });
      const { id } = (await mute.next('control', 'join_success')).payload;
      await alice.next('control', 'joined');

      // cut without a closing handshake
      expect((await mute.closed).code).toBe(1006);
      expect((await alice.next('control', 'left')).payload).toEqual({ message: 'left', id, reason: 'timeout' });

      // Alice's client answers every ping: connected before Mute, she has outlived the timeout too
      alice.command('echo', 'ping');
      await alice.next('echo');
      await alice.close();
    });

    it('drops a client the timeout after its last pong, not at a later ping', async () => {
      // without a pong since the opening, a check at each ping would notice at the second one (3 s)
      const other = await app.withConfig({ signaling: { ping_interval_ms: 1_500, pong_timeout_ms: 1_600 } });
      try {
        const ws = new WebSocket(signalingUrl(other), [DEFAULT_PROTOCOL, `ticket#${(await startTicket(other, (await room(other)).owner)).ticket}`], {
          autoPong: false,
        });
        const mute = new SignalingClient(ws);
        await once(ws, 'open');
        const opened = performance.now();
        expect((await mute.closed).code).toBe(1006);
        const lasted = performance.now() - opened;
        expect(lasted).toBeGreaterThan(1_500);
        expect(lasted).toBeLessThan(2_600);
      } finally {
        await other.close();
      }
    });

    it('drops a client that does not read what it is sent, and the room hears it left on timeout', async () => {
      const other = await app.withConfig(defaultLiveness);
      const { owner, guest } = await room(other);
      const alice = await joinRoom(other, owner, 'Alice');
      const bob = await joinRoom(other, guest, 'Bob');
      await alice.next('control', 'joined');
      try {
        stopReading(bob);
        // each echo answer waits for Bob: beyond what the sockets' buffers hold, it waits in the server's memory
        for (let n = 0; n < 700; n++) bob.command('echo', 'ping', { padding: 'x'.repeat(60_000) });
        // long before the heartbeat would notice (20 s)
        expect((await alice.next('control', 'left', 10_000)).payload).toEqual({ message: 'left', id: bob.joinSuccess.id, reason: 'timeout' });
      } finally {
        bob.ws.terminate();
        await other.close();
      }
    });
  });

  describe('start', () => {
    it('refuses a soft frame limit above the hard one', async () => {
      const misconfigured = app.withConfig({ ...signalingConfig(), signaling: { max_frame_bytes: 2048, max_message_bytes: 4096 } });
      await expect(misconfigured).rejects.toThrow('signaling.max_message_bytes must not exceed signaling.max_frame_bytes');
    });

    it('refuses a pong timeout not longer than the ping interval', async () => {
      const misconfigured = app.withConfig({ ...signalingConfig(), signaling: { ping_interval_ms: 20_000, pong_timeout_ms: 20_000 } });
      await expect(misconfigured).rejects.toThrow('signaling.pong_timeout_ms must exceed signaling.ping_interval_ms');
    });
  });

  describe('shutdown', () => {
    it('closes every socket of the instance with 1001, joined or not', async () => {
      const other = await app.withConfig({ ...signalingConfig(), ...fastLiveness });
      const { owner } = await room(other);
      const alice = await joinRoom(other, owner, 'Alice');
      const lurker = await connect(other, (await startTicket(other, owner)).ticket);
      await other.close();
      expect((await alice.closed).code).toBe(1001);
      expect((await lurker.closed).code).toBe(1001);
    });

    it('cuts a socket that does not answer the closing, and refuses new ones meanwhile without using their tickets', async () => {
      const other = await app.withConfig(defaultLiveness);
      const { owner } = await room(other);
      const silent = await joinRoom(other, owner, 'Silent');
      stopReading(silent);
      const ticket = (await startTicket(other, owner)).ticket;
      const closing = other.close();
      // the instance waits for the silent socket, a while
      await expect(connect(other, ticket)).rejects.toThrow('upgrade refused with 503');
      if (redisUrl) {
        const elsewhere = await connect(app, ticket);
        await elsewhere.close();
      }
      await closing; // within the test's time: the silent socket was cut, not waited for (ws would wait 30 s)
      silent.ws.terminate();
    });

    it.skipIf(!redisUrl)('lets the participants of a closing instance leave, as the others on other instances see', async () => {
      const other = await app.withConfig({ ...signalingConfig(), ...fastLiveness });
      const { owner, guest } = await room();
      const alice = await joinRoom(app, owner, 'Alice');
      const bob = await joinRoom(other, guest, 'Bob');
      await alice.next('control', 'joined');
      await other.close();
      expect((await bob.closed).code).toBe(1001);
      expect((await alice.next('control', 'left')).payload).toEqual({ message: 'left', id: bob.joinSuccess.id, reason: 'quit' });
      await alice.close();
    });
  });

  describe('resumption', () => {
    it('gives a participant who dropped and starts again with its token its participant id back', async () => {
      const { owner, guest } = await room();
      const alice = await joinRoom(app, owner, 'Alice');
      const bob = await joinRoom(app, guest, 'Bob');
      await bob.close();
      expect((await alice.next('control', 'left')).payload).toMatchObject({ id: bob.joinSuccess.id, reason: 'quit' });

      const { ticket } = await startResuming(app, { ...guest, resumption: bob.resumption });
      const again = await connect(app, ticket);
      again.command('control', 'join', { display_name: 'Bob' });
      expect((await again.next('control', 'join_success')).payload.id).toBe(bob.joinSuccess.id);
      expect((await alice.next('control', 'joined')).payload.id).toBe(bob.joinSuccess.id);
      await Promise.all([alice.close(), again.close()]);
    });

    it('answers a start with the token of a running session with 400 session_running, and the session goes on', async () => {
      const { owner } = await room();
      const alice = await joinRoom(app, owner, 'Alice');
      // longer than a refresh: the running session keeps its record alive
      await new Promise((resolve) => setTimeout(resolve, 300));
      const answer = await post(app, `/v1/rooms/${owner.roomId}/start`, { token: (owner as { token: string }).token, body: { resumption: alice.resumption } });
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe('session_running');
      alice.command('echo', 'ping');
      await alice.next('echo');
      await alice.close();
    });

    it('closes a session with 1000 once a resuming start has taken its token', async () => {
      const { owner } = await room();
      const alice = await joinRoom(app, owner, 'Alice');
      // the record says the session dropped while its socket is in fact still open (a drop this
      // instance has not noticed yet): a start may then take the token
      await app.convene.signalingStore.markDisconnected(alice.resumption);
      const { ticket } = await startResuming(app, { ...owner, resumption: alice.resumption });
      // at the next refresh the old session finds its record gone and gives way
      expect((await alice.closed).code).toBe(1000);
      const again = await connect(app, ticket);
      again.command('control', 'join', { display_name: 'Alice' });
      expect((await again.next('control', 'join_success')).payload.id).toBe(alice.joinSuccess.id);
      await again.close();
    });
  });
});

/**
 * A start with a resumption token, repeated while it answers `session_running`: the server marks
 * the dropped session disconnected only after its departure is done, a moment after the client
 * saw the socket close.
 */
async function startResuming(app: TestApp, starter: Starter & { resumption: string }): Promise<{ ticket: string; resumption: string }> {
  const deadline = Date.now() + 3_000;
  for (;;) {
    try {
      return await startTicket(app, starter);
    } catch (err) {
      if (!String(err).includes('session_running') || Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}
