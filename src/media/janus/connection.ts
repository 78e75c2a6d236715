/**
 * One Janus server as Convene uses it: one WebSocket (subprotocol `janus-protocol`) and on it one
 * Janus session, shared by every handle, kept alive by a `keepalive` every `keepaliveMs` (Janus
 * drops a session after its `session_timeout` without a request). Each request carries a
 * transaction of its own and fails after `requestTimeoutMs`.
 *
 * Losing the socket, the session (Janus's `timeout`) or a keepalive takes the connection down:
 * pending requests reject, every handle's listener gets `lost` (its PeerConnection is gone with the
 * session), connection listeners get `down`, and it reconnects with a doubling backoff (1 s up to
 * 8 s) to a new session, which listeners learn from `up`. `close()` ends all that for good.
 */
import WebSocket, { type RawData } from 'ws';
import type { Logger } from '../../logger.js';
import { JanusConnectionLostError, JanusError, JanusTimeoutError } from './errors.js';
import { handleEvent, JanusHandle, type HandleTransport, type JanusHandleEvent, type JanusHandleListener, type JanusMessage } from './handle.js';

export interface JanusConnectionOptions {
  /** The Janus WebSocket API, e.g. `ws://janus:8188`. */
  url: string;
  logger: Logger;
  /** Default 10 000: well under Janus's default `session_timeout` of 60 s. */
  keepaliveMs?: number;
  /** Default 10 000; also the WebSocket handshake's limit. */
  requestTimeoutMs?: number;
  /** The first reconnection delay, doubled after each failed attempt up to `reconnectMaxMs`. Defaults 1 000 and 8 000. */
  reconnectFirstMs?: number;
  reconnectMaxMs?: number;
}

/** `connecting`: the first attempt; `down`: lost or never up, retrying; `closed`: after `close()`. */
export type JanusConnectionState = 'idle' | 'connecting' | 'up' | 'down' | 'closed';

export type JanusConnectionEvent = { type: 'up'; sessionId: number } | { type: 'down'; reason: string };

export type JanusConnectionListener = (event: JanusConnectionEvent) => void;

interface Pending {
  resolve(message: JanusMessage): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
  ackEnds: boolean;
}

/** One socket and the session on it; once lost, every use of it fails. */
interface Link {
  socket: WebSocket;
  sessionId?: number;
  keepalive?: NodeJS.Timeout;
  pending: Map<string, Pending>;
  lost: boolean;
}

const VIDEOROOM = 'janus.plugin.videoroom';

export class JanusConnection {
  private currentState: JanusConnectionState = 'idle';
  private link: Link | undefined;
  private readonly handles = new Map<number, JanusHandle>();
  private readonly listeners = new Set<JanusConnectionListener>();
  private lastTransaction = 0;
  private retryDelayMs: number;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly log: Logger;
  private readonly keepaliveMs: number;
  private readonly requestTimeoutMs: number;

  constructor(private readonly options: JanusConnectionOptions) {
    this.log = options.logger.child({ component: 'janus', url: options.url });
    this.keepaliveMs = options.keepaliveMs ?? 10_000;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
    this.retryDelayMs = options.reconnectFirstMs ?? 1_000;
  }

  get state(): JanusConnectionState {
    return this.currentState;
  }

  /** The Janus session while up (for logs and the admin API). */
  get sessionId(): number | undefined {
    return this.currentState === 'up' ? this.link?.sessionId : undefined;
  }

  /** Registers a listener of `up` and `down`; returns its removal. */
  listen(listener: JanusConnectionListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Opens the socket and the session. Rejects if this first attempt fails, and the connection then
   * goes on trying in the background (`down`, later `up`), as after any loss.
   */
  connect(): Promise<void> {
    if (this.currentState !== 'idle') throw new Error(`janus connection: connect() when ${this.currentState}`);
    this.currentState = 'connecting';
    return this.open();
  }

  /** Attaches the videoroom plugin: a new handle whose unasked events go to `listener`. */
  async attach(listener: JanusHandleListener): Promise<JanusHandle> {
    const link = this.link;
    if (this.currentState !== 'up' || !link) throw new JanusConnectionLostError(`not connected (${this.currentState})`);
    const reply = await this.send(link, { janus: 'attach', plugin: VIDEOROOM }, false);
    // lost while attaching: the handle died with the session, and its listener would never hear of it
    if (link.lost) throw new JanusConnectionLostError('lost while attaching');
    const handle = new JanusHandle(Number(reply.data?.id), this.transportOf(link), listener);
    this.handles.set(handle.id, handle);
    return handle;
  }

  /** Destroys the session if it is up, closes the socket and stops reconnecting. Nothing is emitted after it. */
  async close(): Promise<void> {
    if (this.currentState === 'closed') return;
    this.currentState = 'closed';
    clearTimeout(this.retryTimer);
    const link = this.link;
    if (!link) return;
    if (!link.lost && link.sessionId !== undefined) {
      await this.send(link, { janus: 'destroy' }, false).catch((error: unknown) => this.log.warn({ err: error }, 'janus: destroying the session failed'));
    }
    this.lose(link, 'closed');
    this.handles.clear();
  }

  private async open(): Promise<void> {
    const socket = new WebSocket(this.options.url, 'janus-protocol', { handshakeTimeout: this.requestTimeoutMs });
    const link: Link = { socket, pending: new Map(), lost: false };
    this.link = link;
    socket.on('message', (raw) => this.receive(link, raw));
    socket.on('error', (error) => this.lose(link, `socket error: ${error.message}`));
    socket.on('close', (code) => this.lose(link, `socket closed (${code})`));
    try {
      await opened(socket);
      const reply = await this.send(link, { janus: 'create' }, false);
      if (link.lost) throw new JanusConnectionLostError('lost while creating the session');
      link.sessionId = Number(reply.data?.id);
    } catch (error) {
      this.lose(link, `no session: ${messageOf(error)}`);
      throw error;
    }
    link.keepalive = setInterval(() => this.keepAlive(link), this.keepaliveMs);
    this.currentState = 'up';
    this.retryDelayMs = this.options.reconnectFirstMs ?? 1_000;
    this.log.info({ sessionId: link.sessionId }, 'janus: session up');
    this.emit({ type: 'up', sessionId: link.sessionId });
  }

  private keepAlive(link: Link): void {
    this.send(link, { janus: 'keepalive' }, true).catch((error: unknown) => this.lose(link, `keepalive failed: ${messageOf(error)}`));
  }

  /**
   * Ends a link once: fails its pending requests and, unless the connection was closed, tells its
   * handles they are lost, goes down and schedules the next attempt.
   */
  private lose(link: Link, reason: string): void {
    if (link.lost) return;
    link.lost = true;
    clearInterval(link.keepalive);
    link.socket.terminate();
    for (const pending of link.pending.values()) {
      clearTimeout(pending.timer);
      pending.reject(new JanusConnectionLostError(reason));
    }
    link.pending.clear();
    if (this.currentState === 'closed') return;
    const handles = [...this.handles.values()];
    this.handles.clear();
    for (const handle of handles) this.deliver(handle, { type: 'lost', reason });
    if (this.currentState === 'down') {
      this.log.debug({ reason }, 'janus: reconnection attempt failed');
    } else {
      this.currentState = 'down';
      this.log.warn({ reason, handles: handles.length }, 'janus: connection down');
      this.emit({ type: 'down', reason });
    }
    // a failed attempt has gone through lose() already, which schedules the next one
    this.retryTimer = setTimeout(() => {
      this.open().catch(() => undefined);
    }, this.retryDelayMs);
    this.retryDelayMs = Math.min(this.retryDelayMs * 2, this.options.reconnectMaxMs ?? 8_000);
  }

  private send(link: Link, message: Omit<JanusMessage, 'transaction' | 'session_id'>, ackEnds: boolean): Promise<JanusMessage> {
    if (link.lost) return Promise.reject(new JanusConnectionLostError('not connected'));
    const transaction = String(++this.lastTransaction);
    const what = [message.janus, (message.body as { request?: string } | undefined)?.request].filter(Boolean).join(' ');
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        link.pending.delete(transaction);
        reject(new JanusTimeoutError(what, this.requestTimeoutMs));
      }, this.requestTimeoutMs);
      link.pending.set(transaction, { resolve, reject, timer, ackEnds });
      link.socket.send(JSON.stringify({ ...message, transaction, ...(link.sessionId !== undefined && { session_id: link.sessionId }) }));
    });
  }

  private receive(link: Link, raw: RawData): void {
    if (link.lost) return;
    let message: JanusMessage;
    try {
      message = JSON.parse(text(raw)) as JanusMessage;
    } catch {
      this.log.warn('janus: a message that is not JSON');
      return;
    }
    if (message.transaction !== undefined) return this.settle(link, message);
    if (message.janus === 'timeout') return this.lose(link, 'Janus dropped the session (session_timeout)');
    const handle = message.sender === undefined ? undefined : this.handles.get(message.sender);
    const event = handleEvent(message);
    if (!handle || !event) {
      this.log.debug({ janus: message.janus, sender: message.sender }, 'janus: a message for no one');
      return;
    }
    if (event.type === 'detached') this.handles.delete(handle.id);
    this.deliver(handle, event);
  }

  /** The answer to a request: `ack` (final for keepalive and trickle), `success`, `event` or `error`. */
  private settle(link: Link, message: JanusMessage): void {
    const pending = link.pending.get(message.transaction!);
    if (!pending) {
      this.log.debug({ janus: message.janus }, 'janus: an answer after its request timed out');
      return;
    }
    if (message.janus === 'ack' && !pending.ackEnds) return;
    clearTimeout(pending.timer);
    link.pending.delete(message.transaction!);
    const error = message.error ?? pluginError(message);
    if (error) pending.reject(new JanusError(error.code, error.reason));
    else pending.resolve(message);
  }

  private transportOf(link: Link): HandleTransport {
    return { request: (message, ackEnds) => this.send(link, message, ackEnds), forget: (id) => this.handles.delete(id) };
  }

  private deliver(handle: JanusHandle, event: JanusHandleEvent): void {
    try {
      handle.listener(event);
    } catch (error) {
      this.log.error({ err: error, handle: handle.id, event: event.type }, 'janus: a handle listener threw');
    }
  }

  private emit(event: JanusConnectionEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.log.error({ err: error, event: event.type }, 'janus: a connection listener threw');
      }
    }
  }
}

function opened(socket: WebSocket): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
    socket.once('close', () => reject(new JanusConnectionLostError('the socket closed before it opened')));
  });
}

/** A plugin's refusal, which Janus delivers as a `success` or `event` whose data has `error_code`. */
function pluginError(message: JanusMessage): { code: number; reason: string } | undefined {
  const data = message.plugindata?.data;
  if (typeof data?.error_code !== 'number') return undefined;
  return { code: data.error_code, reason: typeof data.error === 'string' ? data.error : '' };
}

/** A frame's text: ws hands one frame as one Buffer unless told otherwise (Buffer[] and ArrayBuffer are other binaryTypes). */
function text(raw: RawData): string {
  if (Array.isArray(raw)) return Buffer.concat(raw).toString('utf8');
  return (raw instanceof ArrayBuffer ? Buffer.from(raw) : raw).toString('utf8');
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
