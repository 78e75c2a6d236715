/**
 * What the connection does with every kind of frame a client can send: JSON in text and binary
 * frames; each malformed or refused frame answered with its `control` `error` (and `details` where
 * the contract has them) while the socket stays usable; the soft size limit (error) and the hard one
 * (close 1009); commands before `join`; one command after the other, in order.
 */
import { describe, expect, it } from 'vitest';
import { connect, joinRoom, startTicket, type SignalingClient, type Starter } from '../../support/signaling-client.js';
import { dbOf, insertRoom, signalingConfig } from '../../support/signaling.js';
import { useTestApp } from '../../support/test-app.js';

const everything = { quotas: {}, disabled_modules: [], disabled_features: [] };
/** `no_timer`: a tariff without the timer module. */
const tariffs = { default: 'default', definitions: { default: everything, no_timer: { ...everything, disabled_modules: ['timer'] } } };

const SOFT_LIMIT = 65_536;
const HARD_LIMIT = 1_048_576;
const STOPWATCH = { kind: 'stopwatch', enable_ready_check: false };

describe('signaling frames', () => {
  const app = useTestApp({ ...signalingConfig(), tariffs });

  async function owner(tariff?: string): Promise<Starter> {
    const user = await app.login('owner');
    if (tariff) await dbOf(app).updateTable('users').set({ tariff_name: tariff }).where('id', '=', user.id).execute();
    return { roomId: await insertRoom(app, user), token: user.accessToken };
  }

  /** A socket of the room's owner that has not joined. */
  async function connected(): Promise<SignalingClient> {
    return connect(app, (await startTicket(app, await owner())).ticket);
  }

  /** The control error the next frame is, with its details. */
  async function nextError(client: SignalingClient) {
    const frame = await client.next('control', 'error');
    return frame.payload as { error: string; details?: { namespace?: string; action?: string; problems?: string[] } };
  }

  /** The socket is still open and answers: an echo round trip. */
  async function expectUsable(client: SignalingClient) {
    client.command('echo', 'ping', { n: 1 });
    expect((await client.next('echo')).payload).toEqual({ action: 'ping', n: 1 });
  }

  describe('JSON', () => {
    it('answers bad JSON in a text frame with invalid_json', async () => {
      const client = await connected();
      client.send('{"namespace": "echo", ');
      expect(await nextError(client)).toEqual({ message: 'error', error: 'invalid_json' });
      await expectUsable(client);
      await client.close();
    });

    it('answers bad JSON and bytes that are not UTF-8 in a binary frame with invalid_json', async () => {
      const client = await connected();
      client.send(Buffer.from('not json'));
      expect((await nextError(client)).error).toBe('invalid_json');
      client.send(Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d])); // {"\xff\xfe"}
      expect((await nextError(client)).error).toBe('invalid_json');
      await expectUsable(client);
      await client.close();
    });

    it('reads JSON in a binary frame like a text frame', async () => {
      const client = await connected();
      client.send(Buffer.from(JSON.stringify({ namespace: 'echo', payload: { action: 'ping', binary: true } })));
      expect((await client.next('echo')).payload).toEqual({ action: 'ping', binary: true });
      await client.close();
    });
  });

  describe('the envelope', () => {
    it.each([
      ['a number', '42'],
      ['an array', '[]'],
      ['a string', '"control"'],
      ['null', 'null'],
    ])('answers JSON that is %s with invalid_message', async (_name, frame) => {
      const client = await connected();
      client.send(frame);
      const error = await nextError(client);
      expect(error.error).toBe('invalid_message');
      expect(error.details?.problems).toEqual([expect.stringContaining('must be object')]);
      await expectUsable(client);
      await client.close();
    });

    it('answers a frame without namespace with invalid_message naming the problem', async () => {
      const client = await connected();
      client.send({ payload: { action: 'ping' } });
      const error = await nextError(client);
      expect(error).toMatchObject({ error: 'invalid_message', details: { action: 'ping' } });
      expect(error.details?.problems).toEqual(["must have required property 'namespace'"]);
      await expectUsable(client);
      await client.close();
    });

    it('answers a frame without payload, or with a payload without action, with invalid_message', async () => {
      const client = await connected();
      client.send({ namespace: 'echo' });
      expect(await nextError(client)).toMatchObject({
        error: 'invalid_message',
        details: { namespace: 'echo', problems: ["must have required property 'payload'"] },
      });
      client.send({ namespace: 'echo', payload: { hello: 1 } });
      expect(await nextError(client)).toMatchObject({
        error: 'invalid_message',
        details: { namespace: 'echo', problems: ["/payload must have required property 'action'"] },
      });
      client.send({ namespace: 7, payload: { action: 'ping' } });
      expect(await nextError(client)).toMatchObject({ error: 'invalid_message', details: { action: 'ping', problems: ['/namespace must be string'] } });
      await expectUsable(client);
      await client.close();
    });

    it('answers a namespace no module has with invalid_namespace', async () => {
      const client = await connected();
      client.command('polls', 'start', { topic: 'Lunch?' });
      expect(await nextError(client)).toEqual({ message: 'error', error: 'invalid_namespace', details: { namespace: 'polls' } });
      client.command('constructor', 'ping');
      expect(await nextError(client)).toMatchObject({ error: 'invalid_namespace', details: { namespace: 'constructor' } });
      await expectUsable(client);
      await client.close();
    });

    it('answers media commands with invalid_namespace without Janus servers: the module is neither built nor in the tariff', async () => {
      const alice = await joinRoom(app, await owner(), 'Alice');
      expect(alice.joinSuccess.tariff.enabled_modules).not.toContain('media');
      expect(alice.joinSuccess.tariff.modules.map((module) => module.id)).not.toContain('media');
      alice.command('media', 'publish', { target: alice.joinSuccess.id, media_session_type: 'video' });
      expect(await nextError(alice)).toEqual({ message: 'error', error: 'invalid_namespace', details: { namespace: 'media' } });
      await expectUsable(alice);
      await alice.close();
    });

    it("answers a module the room's tariff does not enable with invalid_namespace", async () => {
      const alice = await joinRoom(app, await owner('no_timer'), 'Alice');
      alice.command('timer', 'start', STOPWATCH);
      expect(await nextError(alice)).toMatchObject({ error: 'invalid_namespace', details: { namespace: 'timer' } });
      await expectUsable(alice);
      await alice.close();
    });
  });

  describe('the command', () => {
    it('answers an action the namespace does not have with invalid_message', async () => {
      const alice = await joinRoom(app, await owner(), 'Alice');
      alice.command('timer', 'explode');
      expect(await nextError(alice)).toMatchObject({ error: 'invalid_message', details: { namespace: 'timer', action: 'explode' } });
      alice.command('control', '__proto__');
      expect(await nextError(alice)).toMatchObject({ error: 'invalid_message', details: { namespace: 'control', action: '__proto__' } });
      await expectUsable(alice);
      await alice.close();
    });

    it('answers wrong types and missing fields with invalid_message and the schema problem', async () => {
      const alice = await joinRoom(app, await owner(), 'Alice');
      alice.command('timer', 'start', { ...STOPWATCH, enable_ready_check: 'yes' });
      const wrongType = await nextError(alice);
      expect(wrongType).toMatchObject({ error: 'invalid_message', details: { namespace: 'timer', action: 'start' } });
      expect(wrongType.details?.problems).toEqual([expect.stringMatching(/^\/payload\/enable_ready_check /)]);

      alice.command('timer', 'start', { enable_ready_check: false });
      const missing = await nextError(alice);
      expect(missing.details?.problems).toEqual([expect.stringContaining("must have required property 'kind'")]);

      alice.command('timer', 'stop', { timer_id: 42 });
      expect((await nextError(alice)).details?.problems).toEqual([expect.stringMatching(/^\/payload\/timer_id /)]);
      // none of these reached the timer: nothing started
      await alice.expectNothing('timer');
      await expectUsable(alice);
      await alice.close();
    });

    it('answers a bad join with invalid_message before control sees it', async () => {
      const client = await connected();
      client.command('control', 'join', { display_name: 5 });
      expect(await nextError(client)).toMatchObject({ error: 'invalid_message', details: { namespace: 'control', action: 'join' } });
      client.command('control', 'join', { display_name: 'Alice' });
      await client.next('control', 'join_success');
      await client.close();
    });
  });

  describe('size limits', () => {
    it('answers a frame over the soft limit with message_too_large and keeps the socket', async () => {
      const client = await connected();
      client.command('echo', 'ping', { padding: 'x'.repeat(SOFT_LIMIT) });
      expect(await nextError(client)).toEqual({ message: 'error', error: 'message_too_large' });
      client.send(Buffer.alloc(SOFT_LIMIT + 1, 0x20)); // binary frames count alike
      expect((await nextError(client)).error).toBe('message_too_large');
      await expectUsable(client);
      await client.close();
    });

    it('accepts a frame right at the soft limit', async () => {
      const client = await connected();
      const frame = JSON.stringify({ namespace: 'echo', payload: { action: 'ping', padding: '' } });
      client.send(frame.replace('""', `"${'x'.repeat(SOFT_LIMIT - frame.length)}"`));
      expect((await client.next('echo')).payload.padding).toHaveLength(SOFT_LIMIT - frame.length);
      await client.close();
    });

    it('closes the socket with 1009 on a frame over the hard limit', async () => {
      const client = await connected();
      client.send(Buffer.alloc(HARD_LIMIT + 1, 0x20));
      expect((await client.closed).code).toBe(1009);
    });
  });

  describe('before join', () => {
    it('answers commands of other namespaces with not_yet_joined, and echo as always', async () => {
      const client = await connected();
      client.command('timer', 'start', STOPWATCH);
      expect(await nextError(client)).toEqual({ message: 'error', error: 'not_yet_joined' });
      client.command('moderation', 'accept', { target: '7c9e6679-7425-40de-944b-e07fc1f90ae7' });
      expect((await nextError(client)).error).toBe('not_yet_joined');
      await expectUsable(client);
      client.command('control', 'join', { display_name: 'Alice' });
      await client.next('control', 'join_success');
      client.command('timer', 'start', STOPWATCH);
      await client.next('timer', 'started');
      await client.close();
    });
  });

  describe('order', () => {
    it('finishes a join before the next command of the socket is looked at', async () => {
      const client = await connected();
      // sent together: the timer start must find the session joined (no not_yet_joined)
      client.command('control', 'join', { display_name: 'Alice' });
      client.command('timer', 'start', STOPWATCH);
      client.command('echo', 'ping');
      await client.next('timer', 'started');
      await client.next('echo');
      // `started` comes through the room's bus, the other two straight to the sender: only theirs is a fixed order
      const direct = client.received.filter((frame) => frame.namespace !== 'timer');
      expect(direct.map((frame) => frame.payload.message ?? frame.payload.action)).toEqual(['join_success', 'ping']);
      await client.close();
    });

    it('answers many frames in the order they were sent', async () => {
      const client = await connected();
      for (let n = 0; n < 50; n++) {
        if (n % 5 === 0) client.send('not json');
        else client.command('echo', 'ping', { n });
      }
      for (let n = 0; n < 50; n++) {
        const frame = await client.next();
        if (n % 5 === 0) expect(frame.payload).toEqual({ message: 'error', error: 'invalid_json' });
        else expect(frame.payload).toEqual({ action: 'ping', n });
      }
      await client.close();
    });
  });
});
