/**
 * A socket's life beyond single frames: the size limits must make sense at start; the heartbeat
 * drops a client that stops answering pings (and the room hears it left on `timeout`); shutting an
 * instance down closes its sockets with 1001; and resumption: a dropped participant who starts
 * again with its token gets its id back, a token whose session still runs is refused, and a session
 * whose token was taken is closed with 1000. The instances here ping every 200 ms, drop after
 * 600 ms without pong (a margin for a busy test process, whose own clients answer the pings) and
 * refresh every 200 ms.
 */
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  connect,
  DEFAULT_PROTOCOL,
  joinRoom,
  SignalingClient,
  signalingUrl,
  startTicket,
  type Starter,
} from '../../support/signaling-client.js';
import { insertInvite, insertRoom, post, redisUrl, signalingConfig } from '../../support/signaling.js';
import { useTestApp, type TestApp } from '../../support/test-app.js';

const fastLiveness = { signaling: { ping_interval_ms: 200, pong_timeout_ms: 600, resumption_refresh_ms: 200 } };

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

      // Alice's client answers every ping: she outlives the timeout by far
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      alice.command('echo', 'ping');
      await alice.next('echo');
      await alice.close();
    });
  });

  describe('start', () => {
    it('refuses a soft frame limit above the hard one', async () => {
      const misconfigured = app.withConfig({ ...signalingConfig(), signaling: { max_frame_bytes: 2048, max_message_bytes: 4096 } });
      await expect(misconfigured).rejects.toThrow('signaling.max_message_bytes must not exceed signaling.max_frame_bytes');
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
