/**
 * The signaling tests' client, built on the typed client of packages/client: it opens `/signaling` with a
 * ticket (a `ws` socket, so tests can also pause, terminate or shape it), sends any frame (malformed
 * ones too), and keeps every frame the server sends in an inbox. Every frame is checked against the
 * contract (the envelope, then the event's own generated validator) by the typed client's check, so
 * no test can pass on a frame the spec does not allow.
 *
 *   const alice = await joinRoom(app, { token: owner.accessToken, roomId }, 'Alice');
 *   alice.send({ namespace: 'timer', payload: { action: 'start', kind: 'stopwatch', enable_ready_check: false } });
 *   const started = await alice.next('timer', 'started');
 */
import WebSocket from 'ws';
import type { EventsByNamespace } from '../../generated/signaling/types.js';
import { SignalingConnection } from '../../packages/client/src/signaling-connection.js';
import { checkServerFrame as checkContract } from '../../packages/client/src/signaling-contract.js';
import { SignalingConnectError } from '../../packages/client/src/signaling-errors.js';
import { DEFAULT_SIGNALING_PROTOCOL, signalingUrl as signalingUrlOf } from '../../packages/client/src/signaling.js';
import type { SignalingClose } from '../../packages/client/src/signaling-types.js';
import { freshSource, post } from './signaling.js';
import type { TestApp } from './test-app.js';

export const DEFAULT_PROTOCOL = DEFAULT_SIGNALING_PROTOCOL;

/** A server frame as received: the envelope with its payload. */
export interface ServerFrame<P = any> {
  namespace: string;
  timestamp: string;
  payload: P;
}

type Payload<N extends string, M extends string> = N extends keyof EventsByNamespace
  ? M extends keyof EventsByNamespace[N]
    ? EventsByNamespace[N][M] extends { payload: infer P }
      ? P
      : any
    : any
  : any;

/** Checks one server frame against the contract; throws with the problems when it does not match. */
export function checkServerFrame(frame: unknown): asserts frame is ServerFrame {
  checkContract(frame);
}

export class SignalingClient {
  /** Frames received and not yet taken by `next`, in order. */
  readonly inbox: ServerFrame[] = [];
  /** Every frame received, taken or not. */
  readonly received: ServerFrame[] = [];
  /** The typed client over the same socket (for typed `send`, `on`, `join` …); it checks every frame. */
  readonly connection: SignalingConnection;
  readonly closed: Promise<SignalingClose>;
  private waiters: Array<() => void> = [];
  /** The typed client has delivered the close, after every frame that came before it. */
  private ended = false;

  constructor(readonly ws: WebSocket) {
    this.connection = new SignalingConnection(ws, { check: checkServerFrame });
    this.connection.onFrame((frame) => {
      this.inbox.push(frame);
      this.received.push(frame);
      this.wake();
    });
    this.closed = this.connection.closed;
    void this.closed.then(() => {
      this.ended = true;
      this.wake();
    });
  }

  private wake() {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** Sends a frame: an object as JSON, a string or Buffer as is (unchecked: tests send malformed frames too). */
  send(frame: unknown): void {
    this.ws.send(typeof frame === 'string' || Buffer.isBuffer(frame) ? frame : JSON.stringify(frame));
  }

  command(namespace: string, action: string, fields: Record<string, unknown> = {}): void {
    this.send({ namespace, payload: { action, ...fields } });
  }

  /**
   * The next frame (of `namespace` with `message`, when given), skipping and keeping the others in
   * the inbox. Fails after `timeoutMs`, or at once when the server sent a frame the contract does not allow.
   */
  async next<N extends string, M extends string>(namespace?: N, message?: M, timeoutMs = 3_000): Promise<ServerFrame<Payload<N, M>>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.connection.failure) throw this.connection.failure;
      const index = this.inbox.findIndex(
        (frame) => (namespace === undefined || frame.namespace === namespace) && (message === undefined || frame.payload?.message === message),
      );
      if (index >= 0) return this.inbox.splice(index, 1)[0] as ServerFrame<Payload<N, M>>;
      const left = deadline - Date.now();
      if (left <= 0 || this.ended) {
        throw new Error(`no ${namespace ?? 'frame'}${message ? ` ${message}` : ''} within ${timeoutMs} ms; inbox: ${JSON.stringify(this.inbox)}`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Fails when a frame (of `namespace`/`message`, when given) arrives within `ms`. */
  async expectNothing(namespace?: string, message?: string, ms = 200): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, ms));
    if (this.connection.failure) throw this.connection.failure;
    const unexpected = this.inbox.find(
      (frame) => (namespace === undefined || frame.namespace === namespace) && (message === undefined || frame.payload?.message === message),
    );
    if (unexpected) throw new Error(`unexpected frame: ${JSON.stringify(unexpected)}`);
  }

  close(code = 1000): Promise<SignalingClose> {
    return this.connection.close(code);
  }
}

export const signalingUrl = (app: TestApp) => signalingUrlOf(app.url);

/**
 * Opens the socket with a ticket (and the default protocol unless others are given). A refusal
 * rejects with its status and error body (the typed client reads them from a `ws` socket).
 */
export async function connect(app: TestApp, ticket: string, protocols: string[] = [DEFAULT_PROTOCOL]): Promise<SignalingClient> {
  const client = new SignalingClient(new WebSocket(signalingUrl(app), [...protocols, `ticket#${ticket}`]));
  try {
    await client.connection.opened;
  } catch (err) {
    if (err instanceof SignalingConnectError && err.status !== undefined) {
      throw new Error(`upgrade refused with ${err.status}: ${JSON.stringify(err.body)}`, { cause: err });
    }
    throw err;
  }
  return client;
}

/** Who starts: a user with a token (start), or a guest with an invite code (start_invited). */
export type Starter =
  { roomId: string; token: string; password?: string; resumption?: string } | { roomId: string; inviteCode: string; password?: string; resumption?: string };

/** A ticket and resumption token from the start operation of the starter's kind. */
export async function startTicket(app: TestApp, starter: Starter): Promise<{ ticket: string; resumption: string }> {
  const body = {
    ...(starter.password !== undefined ? { password: starter.password } : {}),
    ...(starter.resumption !== undefined ? { resumption: starter.resumption } : {}),
  };
  const answer =
    'token' in starter
      ? await post(app, `/v1/rooms/${starter.roomId}/start`, { token: starter.token, body, source: freshSource() })
      : await post(app, `/v1/rooms/${starter.roomId}/start_invited`, { body: { invite_code: starter.inviteCode, ...body }, source: freshSource() });
  if (answer.status !== 200) throw new Error(`start answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/** Starts, connects and sends `join`; the join's answer is left in the inbox. */
export async function openAndJoin(app: TestApp, starter: Starter, displayName: string): Promise<SignalingClient & { resumption: string }> {
  const { ticket, resumption } = await startTicket(app, starter);
  const client = await connect(app, ticket);
  client.command('control', 'join', { display_name: displayName });
  return Object.assign(client, { resumption });
}

/** Starts, connects, joins and waits for `join_success`, which is returned with the client. */
export async function joinRoom(app: TestApp, starter: Starter, displayName: string) {
  const client = await openAndJoin(app, starter, displayName);
  const joined = await client.next('control', 'join_success');
  return Object.assign(client, { joinSuccess: joined.payload });
}
