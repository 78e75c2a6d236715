/**
 * The typed signaling client's delivery of frames that come close together, on Node's global
 * WebSocket and on the `ws` package's, against a stand-in server that writes them in one piece (as
 * the real one does with `join_success` and what reached the room meanwhile): `await next(a)` then
 * `next(b)` gets b, a close never overtakes the frames before it, and a close during `join`
 * rejects it with the close. The frames are the contract's own examples, validated on arrival.
 */
import { readFileSync } from 'node:fs';
import WsWebSocket from 'ws';
import { parse } from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { connectSignaling, SignalingClosedError, type SignalingConnection, type WebSocketConstructor } from '../../../packages/client/src/index.js';
import { standIn, type StandIn } from '../../support/signaling-stand-in.js';

const spec = parse(readFileSync(new URL('../../../spec/asyncapi.yaml', import.meta.url), 'utf8')) as {
  components: { messages: Record<string, { examples: { payload: unknown }[] }> };
};
/** The first example of a message of the contract, as the frame a server sends. */
const example = (message: string) => JSON.stringify(spec.components.messages[message]!.examples[0]!.payload);

const servers: StandIn[] = [];
const connections: SignalingConnection[] = [];
afterEach(async () => {
  await Promise.all(connections.splice(0).map((connection) => connection.close()));
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** A stand-in answering the client's first frame with `frames` (then closing with `closeWith`), and a validating connection to it. */
async function connectTo(WebSocket: WebSocketConstructor | undefined, frames: string[], options: { closeWith?: number } = {}) {
  const server = await standIn(frames, options);
  servers.push(server);
  const connection = await connectSignaling({ url: server.url, ticket: 'any', validate: true, ...(WebSocket ? { WebSocket } : {}) });
  connections.push(connection);
  return connection;
}

const implementations: Array<[string, WebSocketConstructor | undefined]> = [
  ["Node's global WebSocket", undefined],
  ["the ws package's WebSocket", WsWebSocket],
];

describe.each(implementations)('on %s', (_name, WebSocket) => {
  it('gets each of frames read together with `await next(a)` then `next(b)`, and the close after them', async () => {
    const connection = await connectTo(WebSocket, [example('timer.started'), example('chat.message_sent'), example('timer.stopped')], { closeWith: 4000 });
    const started = connection.next('timer', 'started', { timeoutMs: 3_000 });
    connection.send('echo', { action: 'go' });
    expect((await started).payload.message).toBe('started');
    expect((await connection.next('chat', 'message_sent', { timeoutMs: 3_000 })).payload.content).toBe('Hello all!');
    expect((await connection.next('timer', 'stopped', { timeoutMs: 3_000 })).payload.message).toBe('stopped');
    expect((await connection.closed).code).toBe(4000);
  });

  it('gets the frame that follows join_success with a `next` after `await join()`', async () => {
    const connection = await connectTo(WebSocket, [example('control.join_success'), example('control.joined')]);
    expect((await connection.join('Alice', { timeoutMs: 3_000 })).result).toBe('join_success');
    expect((await connection.next('control', 'joined', { timeoutMs: 3_000 })).payload.control.display_name).toBe('Bob');
  });

  it('resolves join with join_success when the socket closes right after it', async () => {
    const connection = await connectTo(WebSocket, [example('control.join_success')], { closeWith: 1000 });
    expect((await connection.join('Alice', { timeoutMs: 3_000 })).result).toBe('join_success');
    expect((await connection.closed).code).toBe(1000);
  });

  it('rejects join with a SignalingClosedError carrying the close when the socket closes before the answer', async () => {
    const connection = await connectTo(WebSocket, [], { closeWith: 4000 });
    const failure = await connection.join('Alice', { timeoutMs: 3_000 }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(SignalingClosedError);
    expect(failure).toMatchObject({ message: 'the socket closed (4000) before answer to join', close: { code: 4000 } });
    await expect(connection.join('Alice')).rejects.toMatchObject({
      name: 'SignalingClosedError',
      message: 'cannot send control join: the socket is closed',
      close: { code: 4000 },
    });
  });
});
