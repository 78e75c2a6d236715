/**
 * One signaling socket, typed by the contract: `send` takes only commands the contract has, `on`,
 * `next`, `events` and `join` hand out typed frames. It wraps any WebSocket (the browser's, Node's
 * global one, the `ws` package's) that is opening or open, and imports nothing of Node, so it runs
 * in browsers as it is. `connectSignaling` (signaling.ts) opens the socket and waits for it.
 *
 * Frames are delivered as they arrive, one per task of the event loop (signaling-delivery.ts):
 * `next` and `join` wait for a frame that comes after the call (nothing is buffered for them), so
 * `await next(a); await next(b)` gets b however closely it followed a; `events()` yields every
 * frame from its call on. A frame that is no JSON (or, with a `check`, breaks the contract) ends
 * the trust in the server: every wait fails with a `SignalingProtocolError` and the socket is
 * closed. A closing socket fails the waits still open, after the frames that came before the close.
 *
 * With a `reconnect` (`startSignaling({ reconnect })`), a socket that drops (a close worth retrying,
 * see signaling-reconnect.ts) is replaced: the waits in progress fail (frames may be lost in the
 * gap, so nobody can tell whether theirs came), `send` throws until `reconnected`, and the new
 * socket joins again with the same name; `on`, `onFrame` and `events()` go on across it and get
 * the new `join_success`. `onConnectionEvent` tells `reconnecting`, `reconnected`, `disconnected`.
 */
import type { ServerEvent } from '../generated/signaling/types.js';
import { onePerTask } from './signaling-delivery.js';
import { SignalingClosedError, SignalingCommandError, SignalingProtocolError, SignalingTimeoutError } from './signaling-errors.js';
import { CLOSING, CONNECTING, OPEN, whenOpen } from './signaling-opening.js';
import { isRetryableClose, retryWithBackoff, type Reconnector } from './signaling-reconnect.js';
import type {
  CommandNamespace,
  CommandPayload,
  ConnectionEvent,
  DisconnectReason,
  EventFrame,
  EventMessage,
  EventNamespace,
  FrameCheck,
  JoinResult,
  SignalingClose,
  WaitOptions,
  WebSocketLike,
} from './signaling-types.js';

/**
 * The close code when the server broke the protocol: 1002's meaning in the private range, since a
 * browser's WebSocket may only send 1000 and 3000–4999.
 */
export const PROTOCOL_FAILURE_CLOSE = 4002;

type Listener = (frame: ServerEvent) => void;
/** A wait in progress: failed by the connection when the socket closes or the server breaks the protocol. */
interface PendingWait {
  /** The awaited frame, named in errors. */
  what: string;
  fail(error: Error): void;
}

/** Whether the frame is `namespace`'s `message` (any of its messages for `'*'`). */
function matches<N extends EventNamespace>(frame: ServerEvent, namespace: N, message: EventMessage<N>): boolean {
  return frame.namespace === namespace && (message === '*' || (frame.payload as { message?: unknown }).message === message);
}

/** The least a frame must be for the client to read it: `{namespace, payload}` with a string and an object. */
function isEnvelope(frame: unknown): frame is ServerEvent {
  const { namespace, payload } = (frame ?? {}) as { namespace?: unknown; payload?: unknown };
  return typeof namespace === 'string' && typeof payload === 'object' && payload !== null;
}

export class SignalingConnection {
  /** Resolves once the (first) socket is open; rejects with a `SignalingConnectError` when it closes first. */
  readonly opened: Promise<void>;
  /** Resolves when the connection has closed for good (after any reconnecting), with the last socket's close. */
  readonly closed: Promise<SignalingClose>;
  private readonly listeners = new Set<Listener>();
  private readonly waits = new Set<PendingWait>();
  private readonly connectionListeners = new Set<(event: ConnectionEvent) => void>();
  private readonly check: FrameCheck | undefined;
  private readonly reconnector: Reconnector | undefined;
  private current!: WebSocketLike;
  /** `reconnecting`: between a drop and the end of the attempts; `closed`: for good. */
  private state: 'live' | 'reconnecting' | 'closed' = 'live';
  /** The caller asked to close: nothing is reconnected any more. */
  private closing = false;
  /** Ends the attempts when the caller closes while reconnecting. */
  private stopReconnecting: AbortController | undefined;
  private closedWith: SignalingClose | undefined;
  private resolveClosed!: (close: SignalingClose) => void;
  private protocolFailure: SignalingProtocolError | undefined;
  /** What `join` is sent with again after a reconnect: the name as the server last gave it, and the avatar. */
  private joinAs: { displayName: string; avatarUrl?: string } | undefined;
  /** This participant's id, from the last `join_success`. */
  private participantId: string | undefined;
  /** The attempt's own `join` is being sent: the one command let through while reconnecting. */
  private rejoining = false;

  constructor(
    socket: WebSocketLike,
    /**
     * `check`: a contract check run on every frame before it is delivered (see `signaling-contract.ts`);
     * `reconnect`: how to reopen after a drop (`startSignaling` makes it; without it a close is final).
     */
    options: { check?: FrameCheck; reconnect?: Reconnector } = {},
  ) {
    this.check = options.check;
    this.reconnector = options.reconnect;
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
    this.opened = this.attach(socket);
    this.opened.catch(() => {}); // a caller that never awaits the opening learns of it from `closed`
  }

  /** The socket in use (a new one after each reconnect). */
  get socket(): WebSocketLike {
    return this.current;
  }

  /** The subprotocol the server accepted (it echoes the protocol name, never the ticket). */
  get protocol(): string {
    return this.socket.protocol;
  }

  /** The frame that broke the protocol, once one did. */
  get failure(): SignalingProtocolError | undefined {
    return this.protocolFailure;
  }

  /** Sends a command of the contract; throws a `SignalingClosedError` unless the socket is open (and not reconnecting). */
  send<N extends CommandNamespace>(namespace: N, payload: CommandPayload<N>): void {
    if (this.current.readyState !== OPEN || (this.state === 'reconnecting' && !this.rejoining)) {
      const { action } = payload as { action: string };
      const now = this.closedWith ? 'closed' : this.state === 'reconnecting' ? 'reconnecting' : 'not open';
      throw new SignalingClosedError(`cannot send ${namespace} ${action}: the socket is ${now}`, this.closedWith);
    }
    this.current.send(JSON.stringify({ namespace, payload }));
  }

  /** Calls `handler` with every `namespace` `message` frame (`'*'`: any of the namespace) until unsubscribed. */
  on<N extends EventNamespace, M extends EventMessage<N>>(namespace: N, message: M, handler: (frame: EventFrame<N, M>) => void): () => void {
    return this.onFrame((frame) => {
      if (matches(frame, namespace, message)) handler(frame as EventFrame<N, M>);
    });
  }

  /**
   * Calls `handler` with what happens to the connection itself, until unsubscribed: with reconnect,
   * `reconnecting` before each attempt and `reconnected` once one succeeded (after the frames of the
   * new socket's `join` answer); always `disconnected` once, when it has closed for good.
   */
  onConnectionEvent(handler: (event: ConnectionEvent) => void): () => void {
    const listener = (event: ConnectionEvent) => handler(event);
    this.connectionListeners.add(listener);
    return () => this.connectionListeners.delete(listener);
  }

  /** Calls `handler` with every frame, in order, until unsubscribed. */
  onFrame(handler: (frame: ServerEvent) => void): () => void {
    const listener: Listener = (frame) => handler(frame);
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The next `namespace` `message` frame to arrive (`'*'`: of any message of the namespace). */
  next<N extends EventNamespace, M extends EventMessage<N>>(namespace: N, message: M, options: WaitOptions = {}): Promise<EventFrame<N, M>> {
    return this.waitFor((frame) => (matches(frame, namespace, message) ? (frame as EventFrame<N, M>) : undefined), `${namespace} ${message}`, options);
  }

  /**
   * Sends `control` `join` and resolves with the answer: `join_success`, `in_waiting_room` (wait for
   * `moderation` `accepted`, then `enterRoom`) or `join_blocked` (the room is full). A `control`
   * `error` (`invalid_username`, `already_joined`) rejects with a `SignalingCommandError`.
   */
  async join(displayName: string, options: WaitOptions & { avatarUrl?: string } = {}): Promise<JoinResult> {
    const { avatarUrl, ...wait } = options;
    this.joinAs = { displayName, ...(avatarUrl !== undefined ? { avatarUrl } : {}) };
    // sending first is safe: the wait below is in place before any frame can be dispatched
    this.send('control', { action: 'join', display_name: displayName, ...(avatarUrl !== undefined ? { avatar_url: avatarUrl } : {}) });
    return this.waitFor<JoinResult>(
      (frame) => {
        if (matches(frame, 'control', 'join_success')) return { result: 'join_success', frame: frame as EventFrame<'control', 'join_success'> };
        if (matches(frame, 'moderation', 'in_waiting_room')) return { result: 'in_waiting_room', frame: frame as EventFrame<'moderation', 'in_waiting_room'> };
        if (matches(frame, 'control', 'join_blocked')) return { result: 'join_blocked', frame: frame as EventFrame<'control', 'join_blocked'> };
        if (matches(frame, 'control', 'error')) throw new SignalingCommandError(frame as EventFrame<'control', 'error'>);
        return undefined;
      },
      'answer to join',
      wait,
    );
  }

  /**
   * After `moderation` `accepted`: sends `control` `enter_room` and resolves with `join_success`;
   * a `control` `error` (`not_accepted_or_not_in_waiting_room`) rejects with a `SignalingCommandError`.
   */
  async enterRoom(options: WaitOptions = {}): Promise<EventFrame<'control', 'join_success'>> {
    this.send('control', { action: 'enter_room' });
    return this.waitFor(
      (frame) => {
        if (matches(frame, 'control', 'error')) throw new SignalingCommandError(frame as EventFrame<'control', 'error'>);
        return matches(frame, 'control', 'join_success') ? (frame as EventFrame<'control', 'join_success'>) : undefined;
      },
      'answer to enter_room',
      options,
    );
  }

  /**
   * Every frame from this call on, until the socket closes (the iteration then ends) or the server
   * breaks the protocol (it then throws); `signal` ends it early, as does `break`.
   */
  events(options: { signal?: AbortSignal } = {}): AsyncIterableIterator<ServerEvent> {
    const queue: ServerEvent[] = [];
    let wake: (() => void) | undefined;
    const unsubscribe = this.onFrame((frame) => {
      queue.push(frame);
      wake?.();
    });
    const pending: PendingWait = { what: 'the next frame', fail: () => wake?.() };
    this.waits.add(pending);
    const stop = () => {
      unsubscribe();
      this.waits.delete(pending);
      options.signal?.removeEventListener('abort', onAbort);
      queue.length = 0;
    };
    // at once, not at the next `next()`: an iteration nobody goes on with must not keep collecting frames
    const onAbort = () => {
      stop();
      wake?.();
    };
    if (options.signal?.aborted) stop();
    else options.signal?.addEventListener('abort', onAbort);
    const iterator: AsyncIterableIterator<ServerEvent> = {
      next: async () => {
        for (;;) {
          if (this.protocolFailure) {
            stop();
            throw this.protocolFailure;
          }
          const frame = queue.shift();
          if (frame) return { value: frame, done: false };
          if (this.closedWith || options.signal?.aborted) {
            stop();
            return { value: undefined, done: true };
          }
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
        }
      },
      return: async () => {
        stop();
        return { value: undefined, done: true };
      },
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }

  /**
   * Closes the socket (unless it is closing already), ends any reconnecting, and resolves once the
   * connection has closed for good.
   */
  close(code = 1000, reason?: string): Promise<SignalingClose> {
    this.closing = true;
    this.stopReconnecting?.abort(new SignalingClosedError('the connection was closed while reconnecting'));
    if (this.current.readyState === CONNECTING || this.current.readyState === OPEN) this.current.close(code, reason);
    return this.closed;
  }

  /** Takes `socket` into use: its frames and its close come here, one per task; resolves once it is open. */
  private attach(socket: WebSocketLike): Promise<void> {
    this.current = socket;
    socket.binaryType = 'arraybuffer';
    // one frame per task, as in browsers: a wait set up after `await next(…)` gets the frame read with it
    const inTurn = onePerTask();
    socket.addEventListener('message', (event: { data: unknown }) => inTurn(() => this.receive(event.data)));
    /** The socket's last error message (the `ws` package names causes such as ECONNREFUSED; browsers say nothing). */
    let socketError: string | undefined;
    // the close that follows an error tells the waits; the listener also keeps the ws package from throwing it
    socket.addEventListener('error', (event: { message?: unknown }) => {
      if (typeof event.message === 'string' && event.message) socketError = event.message;
    });
    let wasOpen = false;
    socket.addEventListener('open', () => (wasOpen = true));
    const closed = new Promise<SignalingClose>((resolve) =>
      socket.addEventListener('close', (event: { code: number; reason: string; wasClean: boolean }) =>
        // after the frames that came before it
        inTurn(() => {
          const close = { code: event.code, reason: event.reason, wasClean: event.wasClean };
          resolve(close);
          if (socket === this.current) this.socketClosed(close, wasOpen);
        }),
      ),
    );
    return whenOpen(socket, closed, () => socketError);
  }

  /** The socket in use closed: fail the waits, then reconnect, or end. */
  private socketClosed(close: SignalingClose, wasOpen: boolean): void {
    if (this.state === 'closed') return;
    // a socket that never opened is the caller's failed opening (or a failed attempt's): nothing to resume
    const reconnect = this.state === 'live' && wasOpen && this.reconnector !== undefined && !this.closing && !this.protocolFailure && isRetryableClose(close);
    const also = reconnect ? '; reconnecting' : '';
    for (const wait of [...this.waits]) wait.fail(this.protocolFailure ?? closedBefore(close, wait.what, also));
    if (this.state === 'reconnecting') return; // the attempt under way learns of it through its own wait
    if (reconnect) return void this.reconnect(close);
    this.finish(close, this.closing ? 'closed_by_client' : this.protocolFailure ? 'protocol_failure' : 'socket_closed');
  }

  /**
   * After a drop: attempts to reopen (a new ticket with the resumption token) and to join again, with
   * the policy's backoff, until one succeeds, one fails for good, the attempts run out or the caller
   * closes. Frames of the new socket reach every subscriber as before.
   */
  private async reconnect(drop: SignalingClose): Promise<void> {
    const { policy } = this.reconnector!;
    this.state = 'reconnecting';
    const stop = (this.stopReconnecting = new AbortController());
    const previousId = this.participantId;
    try {
      const { value: join, attempt } = await retryWithBackoff(policy, () => this.reopen(stop.signal), {
        cause: drop,
        signal: stop.signal,
        onRetry: (retry) => this.emit({ type: 'reconnecting', ...retry }),
      });
      this.state = 'live';
      const resumed = join?.result === 'join_success' && join.frame.payload.id === previousId;
      this.emit({ type: 'reconnected', attempt, join, resumed });
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      this.finish(drop, this.closing ? 'closed_by_client' : 'reconnect_failed', this.closing ? undefined : error);
    } finally {
      this.stopReconnecting = undefined;
    }
  }

  /** One attempt: a new socket for the same participant, open, and joined again when it had joined. */
  private async reopen(signal: AbortSignal): Promise<JoinResult | undefined> {
    const socket = await this.reconnector!.reopen(signal);
    const opened = this.attach(socket);
    try {
      signal.throwIfAborted();
      await opened;
      if (!this.joinAs) return undefined;
      const { displayName, avatarUrl } = this.joinAs;
      // the caller's commands wait for `reconnected`; only this `join` goes out (join sends before its first await)
      this.rejoining = true;
      const answer = this.join(displayName, { avatarUrl, timeoutMs: this.reconnector!.policy.joinTimeoutMs, signal });
      this.rejoining = false;
      return await answer;
    } catch (err) {
      // an attempt that failed leaves no socket behind (nor a session on the server)
      if (socket.readyState === CONNECTING || socket.readyState === OPEN) socket.close(1000, 'reconnect attempt failed');
      throw err;
    }
  }

  /** Closed for good: the waits still open fail, `closed` resolves, and `disconnected` is told. */
  private finish(close: SignalingClose, reason: DisconnectReason, error?: Error): void {
    this.state = 'closed';
    this.closedWith = close;
    for (const wait of [...this.waits]) wait.fail(this.protocolFailure ?? closedBefore(close, wait.what));
    this.resolveClosed(close);
    this.emit({ type: 'disconnected', reason, close, ...(error ? { error } : {}) });
  }

  private emit(event: ConnectionEvent): void {
    for (const listener of [...this.connectionListeners]) {
      try {
        listener(event);
      } catch (err) {
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }

  /** Keeps what a rejoin needs: this participant's id and its name as the server last named it. */
  private track(frame: ServerEvent): void {
    if (matches(frame, 'control', 'join_success')) {
      const { id, display_name } = (frame as EventFrame<'control', 'join_success'>).payload;
      this.participantId = id;
      this.joinAs = { ...this.joinAs, displayName: display_name };
    } else if (matches(frame, 'moderation', 'display_name_changed')) {
      const { target, new_name } = (frame as EventFrame<'moderation', 'display_name_changed'>).payload;
      if (target === this.participantId && this.joinAs) this.joinAs.displayName = new_name;
    }
  }

  private receive(data: unknown): void {
    if (this.protocolFailure) return;
    const text = typeof data === 'string' ? data : new TextDecoder().decode(data as ArrayBuffer);
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      return this.fail(new SignalingProtocolError(`server frame is no JSON: ${text.slice(0, 200)}`, text));
    }
    try {
      this.check?.(frame);
    } catch (err) {
      return this.fail(err instanceof SignalingProtocolError ? err : new SignalingProtocolError(String(err), frame));
    }
    if (!isEnvelope(frame)) return this.fail(new SignalingProtocolError(`server frame is no {namespace, payload} envelope: ${text.slice(0, 200)}`, frame));
    this.track(frame);
    for (const listener of [...this.listeners]) {
      try {
        listener(frame);
      } catch (err) {
        // one failing handler must not keep the frame from the others (as with EventTarget listeners)
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }

  private fail(error: SignalingProtocolError): void {
    this.protocolFailure = error;
    for (const wait of [...this.waits]) wait.fail(error);
    if (this.current.readyState < CLOSING) this.current.close(PROTOCOL_FAILURE_CLOSE, 'server frame broke the protocol');
  }

  /**
   * Waits for the first frame `pick` maps to a value (undefined: not this one; a throw fails the
   * wait). `what` names the awaited frame in a timeout's message.
   */
  private waitFor<T>(pick: (frame: ServerEvent) => T | undefined, what: string, { timeoutMs, signal }: WaitOptions): Promise<T> {
    if (this.protocolFailure) return Promise.reject(this.protocolFailure);
    if (this.closedWith) return Promise.reject(closedBefore(this.closedWith, what));
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<T>((resolve, reject) => {
      const finish = () => {
        this.listeners.delete(listener);
        this.waits.delete(pending);
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const pending: PendingWait = {
        what,
        fail(error) {
          finish();
          reject(error);
        },
      };
      const listener: Listener = (frame) => {
        let picked: T | undefined;
        try {
          picked = pick(frame);
        } catch (err) {
          return pending.fail(err as Error);
        }
        if (picked !== undefined) {
          finish();
          resolve(picked);
        }
      };
      const onAbort = () => pending.fail(signal!.reason as Error);
      const timer =
        timeoutMs === undefined ? undefined : setTimeout(() => pending.fail(new SignalingTimeoutError(`no ${what} within ${timeoutMs} ms`)), timeoutMs);
      this.listeners.add(listener);
      this.waits.add(pending);
      signal?.addEventListener('abort', onAbort);
    });
  }
}

/** A wait's failure when the socket closed before its frame came (`also`: what happens next). */
function closedBefore(close: SignalingClose, what: string, also = ''): SignalingClosedError {
  return new SignalingClosedError(`the socket closed (${close.code}${close.reason ? ` ${close.reason}` : ''}) before ${what}${also}`, close);
}
