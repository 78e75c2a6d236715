/**
 * One participant's socket (docs/architecture.md §6): the `Session` the modules act on. Every frame is read
 * once, checked by the contract's generated validators (the envelope, then the command's own
 * schema) and handed to its namespace's module; every malformed or refused frame is answered with a
 * `control` `error` and the socket stays open. Commands run strictly one after another, so a `join`
 * has finished before the next command of the same socket is looked at.
 *
 * Also here: the heartbeat (ping, drop without pong), the resumption record (saved on open,
 * refreshed while the socket lives, marked disconnected when it closes) and the departure through
 * the control module, whatever closed the socket.
 *
 * Memory per socket is bounded both ways: a client sending faster than its commands are handled is
 * not read further while `MAX_PENDING_FRAMES` wait (TCP holds the rest, the client is slowed, not
 * refused), and a client that does not read what it is sent is cut once `MAX_UNSENT_BYTES` wait.
 * A socket not read does not deliver pongs either: commands held up for the pong timeout drop it.
 */
import type { Duplex } from 'node:stream';
import type WebSocket from 'ws';
import { commandValidators, validateClientEnvelope } from '../../generated/signaling/validators.js';
import type { ControlErrorDetails, Role } from '../../generated/signaling/types.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../logger.js';
import type { LeaveReason } from './modules/module.js';
import type { SignalingModules } from './modules/index.js';
import type { ParticipantContext, RoomContext } from './room-context.js';
import type { RoomHub, RoomHubs } from './room-hub.js';
import type { Scheduler } from './scheduler.js';
import type { EventPayload, Session, SessionEnd, SessionState, SharedFrame } from './session.js';
import type { SignalingStore } from '../domain/tickets/signaling-store.js';
import { holdForTurn, textFrame } from './socket-writes.js';
import { sendError } from './errors.js';

export interface ConnectionDeps {
  config: Config['signaling'];
  hubs: RoomHubs;
  modules: SignalingModules;
  signalingStore: SignalingStore;
  scheduler: Scheduler;
  logger: Logger;
  /** This instance's liveness id (with Redis): its resumption records name it. */
  instanceId?: string;
}

/** The control errors the connection itself answers (the control module answers its own). */
type ConnectionError = 'invalid_json' | 'invalid_message' | 'invalid_namespace' | 'message_too_large' | 'not_yet_joined' | 'internal_error';

/** States in which the participant is in the room or its waiting room, and so must leave it. */
const PRESENT: ReadonlySet<SessionState> = new Set(['joined', 'waiting', 'accepted']);
/** Passed on in any state: control drives the join flow (and answers `already_joined`), echo is a heartbeat. */
const BEFORE_JOIN: ReadonlySet<string> = new Set(['control', 'echo']);

/**
 * The close code and text of each way the server ends a session: a removal, the time limit and a
 * resumption elsewhere end it normally (1000); a sweep or a shutdown is going away (1001), after
 * which clients reconnect; a failure halfway is 1011.
 */
export const CLOSE_FRAMES: Readonly<Record<SessionEnd, readonly [code: number, text: string]>> = {
  kicked: [1000, 'kicked'],
  banned: [1000, 'banned'],
  debriefed: [1000, 'session ended'],
  time_limit: [1000, 'room time limit reached'],
  resumed_elsewhere: [1000, 'session resumed elsewhere'],
  taken_for_gone: [1001, 'taken for gone'],
  server_shutdown: [1001, 'server shutting down'],
  failed: [1011, 'internal error'],
};

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Frames read and not yet handled beyond which the socket is no longer read (at most one more read's worth arrives). */
const MAX_PENDING_FRAMES = 32;
/** Bytes sent and not yet taken by the client beyond which it is dropped as too slow (`left` with `timeout`). */
const MAX_UNSENT_BYTES = 8 * 1024 * 1024;

export class Connection implements Session {
  state: SessionState = 'connected';
  role: Role;
  displayName?: string;
  avatarUrl?: string;
  joinedAt?: string;

  private hub?: RoomHub;
  /** The commands (and at last the departure) of this socket, one after another. */
  private queue: Promise<void>;
  /** Frames in the queue, the one being handled included. */
  private pending = 0;
  private closing = false;
  private leaveReason: LeaveReason = 'quit';
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly log: Logger;
  /** Settles once the participant has left and the socket's state is cleaned up. */
  readonly done: Promise<void>;

  constructor(
    private readonly ws: WebSocket,
    readonly room: RoomContext,
    readonly participant: ParticipantContext,
    private readonly deps: ConnectionDeps,
    /** The socket under `ws` (the upgrade's), to which room events are written directly (socket-writes.ts); without it, through ws. */
    private readonly socket?: Duplex,
  ) {
    this.role = participant.role;
    this.log = deps.logger.child({ roomId: room.roomId, participantId: participant.id });
    this.queue = this.open().catch((err: unknown) => this.log.error({ err }, 'opening the session failed'));
    ws.on('message', (data: Buffer) => this.receive(data));
    // ws closes the socket itself on a protocol error (1002, 1007, 1009 over max_frame_bytes …)
    ws.on('error', (err) => this.log.debug({ err }, 'signaling socket error'));
    this.done = new Promise((resolve) =>
      ws.once('close', () => resolve(this.depart().catch((err: unknown) => this.log.error({ err }, 'closing the session failed')))),
    );
    this.startHeartbeat();
  }

  send(namespace: string, payload: EventPayload, payloadJson?: string): void {
    if (this.writable()) this.ws.send(this.serialize(namespace, payload, payloadJson));
  }

  /** A room event: its frame, built once for every recipient, leaves with the socket's other room events of this turn (socket-writes.ts). */
  sendShared(frame: SharedFrame): void {
    if (!this.socket) return this.send(frame.namespace, frame.payload);
    if (!this.writable()) return;
    frame.wire ??= textFrame(this.serialize(frame.namespace, frame.payload));
    holdForTurn(this.socket);
    this.socket.write(frame.wire);
  }

  /** Whether a frame can go out: the socket is open and the client is reading (else it is dropped). */
  private writable(): boolean {
    if (this.ws.readyState !== this.ws.OPEN) return false;
    if (this.ws.bufferedAmount <= MAX_UNSENT_BYTES) return true;
    this.drop();
    return false;
  }

  /** The frame's JSON: `JSON.stringify({namespace, timestamp, payload})`, with the payload's own JSON when given. */
  private serialize(namespace: string, payload: EventPayload, payloadJson?: string): string {
    const timestamp = new Date(this.deps.scheduler.now()).toISOString();
    if (payloadJson === undefined) return JSON.stringify({ namespace, timestamp, payload });
    return `{"namespace":${JSON.stringify(namespace)},"timestamp":"${timestamp}","payload":${payloadJson}}`;
  }

  leave(reason: SessionEnd): void {
    const [code, text] = CLOSE_FRAMES[reason];
    this.ws.close(code, text);
  }

  enqueue(task: () => Promise<void>): void {
    // once closing, the departure may already be under way: a task must not run beside it
    if (this.closing) return;
    this.queue = this.queue.then(() => (this.closing ? undefined : task())).catch((err: unknown) => this.log.error({ err }, 'a queued signaling task failed'));
  }

  /** Cuts the socket without a closing handshake (a client that does not answer the close frame). */
  terminate(): void {
    this.ws.terminate();
  }

  /** Cuts a client that stopped answering or reading: the others see it leave on `timeout`. */
  private drop(): void {
    this.leaveReason = 'timeout';
    this.ws.terminate();
  }

  private async open(): Promise<void> {
    const { participant } = this;
    const [hub, saved] = await Promise.allSettled([
      this.deps.hubs.add(this),
      this.deps.signalingStore.saveResumption(
        participant.resumption,
        {
          participantId: participant.id,
          roomId: this.room.roomId,
          who: participant.who,
        },
        this.deps.instanceId,
      ),
    ]);
    if (saved.status === 'rejected') this.log.warn({ err: saved.reason }, 'resumption record not saved; this session cannot be resumed');
    // without a record a refresh would find none and take the session for resumed elsewhere
    else if (!this.closing) this.keepResumable();
    if (hub.status === 'rejected') {
      this.log.error({ err: hub.reason }, 'the room hub did not open; closing the socket');
      this.closing = true;
      this.leave('failed');
      return;
    }
    this.hub = hub.value;
  }

  /** Queues a frame; a full queue stops the reading until it has room again. */
  private receive(data: Buffer): void {
    // an oversize frame is answered in its turn, without keeping its bytes meanwhile
    const task = data.length > this.deps.config.max_message_bytes ? async () => this.fail('message_too_large') : () => this.handleFrame(data);
    if (++this.pending === MAX_PENDING_FRAMES) this.ws.pause();
    this.queue = this.queue
      .then(task)
      .catch((err: unknown) => this.log.error({ err }, 'signaling task failed'))
      .finally(() => {
        if (this.pending-- === MAX_PENDING_FRAMES) this.ws.resume();
      });
  }

  /** Pings every `ping_interval_ms`; a socket without a pong for `pong_timeout_ms` (since the last one, or the opening) is cut. */
  private startHeartbeat(): void {
    const { ping_interval_ms, pong_timeout_ms } = this.deps.config;
    this.every(ping_interval_ms, () => {
      if (this.ws.readyState === this.ws.OPEN) this.ws.ping();
    });
    const deadline = setTimeout(() => {
      // closing: ws ends it (or terminates it) itself
      if (this.ws.readyState === this.ws.OPEN) this.drop();
    }, pong_timeout_ms);
    deadline.unref();
    this.timers.push(deadline);
    this.ws.on('pong', () => deadline.refresh());
  }

  /** Refreshes the saved resumption record while the socket lives. */
  private keepResumable(): void {
    this.every(this.deps.config.resumption_refresh_ms, () => {
      this.deps.signalingStore.refreshResumption(this.participant.resumption).then(
        // gone: a resuming start took the token, so another socket now speaks for this participant
        (alive) => alive || this.leave('resumed_elsewhere'),
        (err: unknown) => this.log.warn({ err }, 'resumption record not refreshed'),
      );
    });
  }

  /** A repeating task, stopped when the socket closes. */
  private every(ms: number, task: () => void): void {
    const timer = setInterval(task, ms);
    timer.unref();
    this.timers.push(timer);
  }

  private async handleFrame(data: Buffer): Promise<void> {
    if (this.closing) return;
    let frame: unknown;
    try {
      // text frames arrive as checked UTF-8; binary ones are decoded strictly too, so bad bytes are bad JSON
      frame = JSON.parse(utf8.decode(data));
    } catch {
      return this.fail('invalid_json');
    }
    const namespace = stringAt(frame, 'namespace');
    const action = stringAt((frame as { payload?: unknown } | null)?.payload, 'action');
    if (!validateClientEnvelope(frame)) {
      return this.fail('invalid_message', { ...described(namespace, action), problems: problemsOf(validateClientEnvelope.errors) });
    }
    const module = this.deps.modules.byNamespace.get(frame.namespace);
    if (!module || !this.room.tariff.enabled_modules.includes(frame.namespace)) {
      return this.fail('invalid_namespace', { namespace: frame.namespace });
    }
    const commands = commandValidators[frame.namespace];
    const validate = commands?.[frame.payload.action] ?? commands?.['*'];
    if (!validate) {
      return this.fail('invalid_message', {
        namespace: frame.namespace,
        action: frame.payload.action,
        problems: [`/payload/action is not a command of ${frame.namespace}`],
      });
    }
    if (!validate(frame)) {
      return this.fail('invalid_message', { namespace: frame.namespace, action: frame.payload.action, problems: problemsOf(validate.errors) });
    }
    if (this.state !== 'joined' && !BEFORE_JOIN.has(frame.namespace)) return this.fail('not_yet_joined');
    if (!this.hub) return; // cannot happen: without a hub the socket is closing and no frame gets here
    try {
      await module.handleCommand(this, frame.payload, this.hub);
    } catch (err) {
      this.log.error({ err, namespace: frame.namespace, action: frame.payload.action }, 'a signaling module failed on a command');
      this.fail('internal_error');
    }
  }

  private fail(error: ConnectionError, details?: ControlErrorDetails): void {
    sendError(this, 'control', error, details);
  }

  /**
   * The socket closed, for whatever reason: after the command in progress, leave the room (or the
   * waiting room) through the control module, then leave the hub and keep the resumption token
   * usable for its grace period. Commands still waiting are dropped.
   */
  private async depart(): Promise<void> {
    this.closing = true;
    for (const timer of this.timers) clearTimeout(timer); // intervals too: Node clears either kind
    await this.queue;
    const { hub } = this;
    if (hub && PRESENT.has(this.state)) {
      await this.deps.modules.control.disconnect(this, hub, this.leaveReason).catch((err: unknown) => this.log.error({ err }, 'leaving the room failed'));
    }
    this.state = 'closed';
    if (hub) await this.deps.hubs.remove(this).catch((err: unknown) => this.log.error({ err }, 'leaving the room hub failed'));
    await this.deps.signalingStore
      .markDisconnected(this.participant.resumption)
      .catch((err: unknown) => this.log.warn({ err }, 'resumption record not marked disconnected'));
  }
}

function stringAt(value: unknown, key: string): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const found = (value as Record<string, unknown>)[key];
  return typeof found === 'string' ? found : undefined;
}

function described(namespace: string | undefined, action: string | undefined): Omit<ControlErrorDetails, 'problems'> {
  return { ...(namespace !== undefined ? { namespace } : {}), ...(action !== undefined ? { action } : {}) };
}

/** The validator's errors as `<JSON pointer> <message>` (no pointer for the frame itself). */
function problemsOf(errors: readonly { instancePath: string; message?: string }[] | null | undefined): string[] {
  return (errors ?? []).map(({ instancePath, message }) => [instancePath, message ?? 'is invalid'].filter(Boolean).join(' '));
}
