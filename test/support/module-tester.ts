/**
 * A tester for signaling module unit tests: the real modules and room hubs over the in-process bus,
 * fake participants whose role, kind and state the test chooses, and a fake clock the test moves
 * (`advance` runs the scheduler's due tasks, a countdown's expiry for one) instead of waiting.
 *
 *   const tester = createModuleTester();
 *   const alice = tester.participant({ role: 'moderator' });
 *   await tester.join(alice);
 *   await tester.command(alice, 'timer', { action: 'start', kind: 'countdown', duration: 60, enable_ready_check: false });
 *   const [started] = tester.sent(alice, 'timer');
 *   await tester.advance(60_000);
 *
 * Each fake participant behaves as the connection makes a socket behave: its commands are checked
 * against the contract's command validators (one the connection would refuse throws here) and run
 * one after another, with the tasks modules queue for it (`enqueue`) in between; once its socket
 * closes (`leave`, or a module's `close`) it is sent nothing more, no task is queued for it, and
 * after the command in progress it departs through the control module. A task that fails fails the
 * next `flush`. Every event a
 * fake participant is sent is serialised as on the wire and checked against the contract; the first
 * violation fails the next `flush`, `sent` or `close`. Scheduled tasks that are due run at the next
 * `flush`, as a timeout of 0 would.
 */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { commandValidators, validateClientEnvelope } from '../../generated/signaling/validators.js';
import type { Role } from '../../generated/signaling/types.js';
import { loadConfig } from '../../src/config/load.js';
import type { RoomEntryService } from '../../src/domain/rooms/room-entry.service.js';
import { createTariffCatalog } from '../../src/domain/tariffs/tariff-catalog.js';
import { createLocalBus } from '../../src/signaling/bus/local.js';
import type { SignalingBus } from '../../src/signaling/bus/signaling-bus.js';
import { createSignalingModules } from '../../src/signaling/modules/index.js';
import type { CommandPayload, ControlModule, LeaveReason, ModuleDeps, SignalingModule } from '../../src/signaling/modules/module.js';
import type { ParticipantContext, ParticipationKind, RoomContext } from '../../src/signaling/room-context.js';
import { RoomHubs, type RoomHub } from '../../src/signaling/room-hub.js';
import { createRoomStores, type RoomStores } from '../../src/signaling/room-stores.js';
import type { Scheduler } from '../../src/signaling/scheduler.js';
import { CLOSE_FRAMES } from '../../src/signaling/connection.js';
import type { EventPayload, Session, SessionEnd, SessionState } from '../../src/signaling/session.js';
import { checkServerFrame, type ServerFrame } from './signaling-client.js';

/** A scheduler on a clock that only `advance` moves. */
export class FakeScheduler implements Scheduler {
  private ms: number;
  private tasks: { atMs: number; seq: number; task: () => void }[] = [];
  private seq = 0;

  constructor(startMs = Date.UTC(2026, 4, 4, 9, 29)) {
    this.ms = startMs;
  }

  readonly now = () => this.ms;

  at(atMs: number, task: () => void): () => void {
    const entry = { atMs, seq: ++this.seq, task };
    this.tasks.push(entry);
    return () => {
      this.tasks = this.tasks.filter((t) => t !== entry);
    };
  }

  /** Tasks waiting to run. */
  get pending(): number {
    return this.tasks.length;
  }

  /**
   * Moves the clock `ms` ahead (0: runs what is due now), running each task that falls due with the
   * clock at its time, in time order, and `settle` after each (tasks start asynchronous work the
   * next may depend on).
   */
  async advance(ms: number, settle: () => Promise<void>): Promise<void> {
    const target = this.ms + ms;
    for (;;) {
      const due = this.tasks.filter((t) => t.atMs <= target).sort((a, b) => a.atMs - b.atMs || a.seq - b.seq)[0];
      if (!due) break;
      this.tasks = this.tasks.filter((t) => t !== due);
      this.ms = Math.max(this.ms, due.atMs);
      due.task();
      await settle();
    }
    this.ms = target;
  }
}

/** What a fake session's socket does through its tester. */
interface FakeSocket {
  deliver(session: FakeSession, namespace: string, payload: EventPayload, payloadJson?: string): void;
  /** The server closed the socket: the participant departs, as after the connection's `close` event. */
  closed(session: FakeSession): void;
  /** A module's task, in the session's order (as the connection queues it). */
  enqueue(session: FakeSession, task: () => Promise<void>): void;
}

/** A participant's session as the modules see it, keeping every frame it is sent. */
export class FakeSession implements Session {
  state: SessionState = 'connected';
  role: Role;
  displayName?: string;
  avatarUrl?: string;
  joinedAt?: string;
  /** Frames sent and not yet taken by `tester.sent`. */
  readonly inbox: ServerFrame[] = [];
  closedWith?: { code: number; reason?: string };
  /** False once the socket is closing: frames to it are dropped, as the connection drops them. */
  socketOpen = true;

  constructor(
    readonly participant: ParticipantContext,
    readonly room: RoomContext,
    private readonly socket: FakeSocket,
  ) {
    this.role = participant.role;
  }

  get id(): string {
    return this.participant.id;
  }

  send(namespace: string, payload: EventPayload, payloadJson?: string): void {
    if (this.socketOpen) this.socket.deliver(this, namespace, payload, payloadJson);
  }

  close(code: number, reason?: string): void {
    if (!this.socketOpen) return;
    this.closedWith = { code, ...(reason !== undefined ? { reason } : {}) };
    this.socket.closed(this);
  }

  /** As the connection ends a session: the close code and text it gives the reason. */
  leave(reason: SessionEnd): void {
    const [code, text] = CLOSE_FRAMES[reason];
    this.close(code, text);
  }

  enqueue(task: () => Promise<void>): void {
    this.socket.enqueue(this, task);
  }
}

export interface ParticipantOptions {
  room?: RoomContext;
  /** An earlier session this one resumes: the same participant (id, identity, room). */
  resumes?: FakeSession;
  role?: Role;
  kind?: ParticipationKind;
  isRoomOwner?: boolean;
  displayName?: string;
  /** A registered user's id (default: a new one); the same for two sessions of one user. */
  userId?: string;
  /** A guest's invite code (default: a new one). */
  inviteCode?: string;
}

export interface ModuleTesterOptions {
  /** The modules under test; default: all of them (createSignalingModules). */
  modules?: (deps: ModuleDeps) => SignalingModule[];
  /** Shared with another tester: two instances of Convene over one bus and clock. */
  bus?: SignalingBus;
  scheduler?: FakeScheduler;
  /** The room entry service for modules that use one (a ban, on a real database); without it any use fails. */
  roomEntry?: RoomEntryService;
  /** Stores to use instead of this tester's own (in-process) ones: the same store given to two testers is shared, as in Redis. */
  stores?: Partial<RoomStores>;
}

/** Modules of these namespaces see commands before `join`; the connection refuses others. */
const BEFORE_JOIN = new Set(['control', 'echo']);
/** States in which a participant is in the room or its waiting room, and so departs when it closes. */
const PRESENT = new Set<SessionState>(['joined', 'waiting', 'accepted']);

/** Module tests touch no database: any use of the room entry service fails loudly instead of pretending. */
export const noRoomEntry = new Proxy({} as RoomEntryService, {
  get(_target, property) {
    throw new Error(`the module tester has no room entry service (a module used roomEntry.${String(property)})`);
  },
});

/**
 * Every module, as the signaling server builds them, for tests whose participants never join: in-
 * process stores and no room entry service (a module that asks for one fails loudly).
 */
export function modulesWithoutRoomEntry(deps: Pick<ModuleDeps, 'config' | 'bus' | 'hubs' | 'scheduler' | 'logger'>): ReturnType<typeof createSignalingModules> {
  return createSignalingModules({ ...deps, roomEntry: noRoomEntry, stores: createRoomStores() });
}

export class ModuleTester {
  readonly scheduler: FakeScheduler;
  readonly bus: SignalingBus;
  readonly modules: ReadonlyMap<string, SignalingModule>;
  readonly hubs: RoomHubs;
  readonly config = loadConfig({ file: false, env: {} });
  private readonly tariffs = createTariffCatalog(this.config.tariffs);
  private readonly violations: Error[] = [];
  /** Per session: its commands, then its departure, one after another (the connection's queue). */
  private readonly queues = new WeakMap<FakeSession, { tail: Promise<void>; departure?: Promise<void> }>();
  private readonly ownsBus: boolean;
  /** This tester and its siblings: the instances whose hubs together make up each room. */
  private family = new Set<ModuleTester>([this]);
  private defaultRoom?: RoomContext;
  private readonly roomEntry?: RoomEntryService;

  constructor(options: ModuleTesterOptions = {}) {
    this.scheduler = options.scheduler ?? new FakeScheduler();
    this.roomEntry = options.roomEntry;
    this.bus = options.bus ?? createLocalBus();
    this.ownsBus = options.bus === undefined;
    const logger = pino({ level: 'silent' });
    const byNamespace = new Map<string, SignalingModule>();
    const deps: ModuleDeps = {
      config: this.config.signaling,
      roomEntry: options.roomEntry ?? noRoomEntry,
      stores: { ...createRoomStores(), ...options.stores },
      bus: this.bus,
      hubs: () => this.hubs,
      scheduler: this.scheduler,
      logger,
      modules: () => byNamespace,
    };
    if (options.modules) {
      for (const module of options.modules(deps)) byNamespace.set(module.namespace, module);
    } else {
      for (const [namespace, module] of createSignalingModules(deps).byNamespace) byNamespace.set(namespace, module);
    }
    this.modules = byNamespace;
    this.hubs = new RoomHubs(this.bus, byNamespace, logger);
  }

  /** Another Convene instance over the same bus and clock (its own hubs and modules). */
  sibling(options: Omit<ModuleTesterOptions, 'bus' | 'scheduler'> = {}): ModuleTester {
    const sibling = new ModuleTester({ ...options, bus: this.bus, scheduler: this.scheduler, ...(this.roomEntry ? { roomEntry: this.roomEntry } : {}) });
    sibling.family = this.family;
    this.family.add(sibling);
    return sibling;
  }

  module<M extends SignalingModule = SignalingModule>(namespace: string): M {
    const module = this.modules.get(namespace);
    if (!module) throw new Error(`the tester runs no ${namespace} module`);
    return module as M;
  }

  /** A room with the default tariff; every participant made without a room is in the first one. */
  room(overrides: Partial<RoomContext> = {}): RoomContext {
    return {
      roomId: randomUUID(),
      ownerId: randomUUID(),
      waitingRoom: false,
      tariff: this.tariffs.defaultTariff,
      ...overrides,
    };
  }

  participant(options: ParticipantOptions = {}): FakeSession {
    const room = options.room ?? options.resumes?.room ?? (this.defaultRoom ??= this.room());
    const kind = options.kind ?? options.resumes?.participant.kind ?? 'user';
    const id = options.resumes?.id ?? randomUUID();
    const participant: ParticipantContext = {
      id,
      who:
        options.resumes?.participant.who ??
        (kind === 'user'
          ? { kind, userId: options.userId ?? randomUUID() }
          : kind === 'guest'
            ? { kind, inviteCode: options.inviteCode ?? randomUUID() }
            : { kind, sipId: id }),
      kind,
      role: options.role ?? options.resumes?.participant.role ?? (kind === 'user' ? 'user' : 'guest'),
      isRoomOwner: options.isRoomOwner ?? false,
      resuming: options.resumes !== undefined,
      resumption: randomUUID(),
    };
    const session = new FakeSession(participant, room, {
      deliver: (to, namespace, payload, payloadJson) => this.record(to, namespace, payload, payloadJson),
      closed: (closing) => {
        this.depart(closing, 'quit').catch((err: unknown) => this.violations.push(err as Error));
      },
      enqueue: (target, task) => {
        if (!target.socketOpen) return; // closing: the connection drops it too
        this.enqueue(target, async () => (target.socketOpen ? task() : undefined)).catch((err: unknown) => this.violations.push(err as Error));
      },
    });
    if (options.displayName !== undefined) session.displayName = options.displayName;
    return session;
  }

  /**
   * Keeps a frame as the client would get it (serialised) and checks it against the contract; a
   * payload sent with its JSON (Session.send's `payloadJson`) must have exactly its serialisation.
   */
  private record(session: FakeSession, namespace: string, payload: EventPayload, payloadJson?: string): void {
    const frame: unknown = JSON.parse(JSON.stringify({ namespace, timestamp: new Date(this.scheduler.now()).toISOString(), payload }));
    try {
      if (payloadJson !== undefined && payloadJson !== JSON.stringify(payload)) {
        throw new Error(`a ${namespace} payload was sent with JSON other than its own: ${payloadJson} for ${JSON.stringify(payload)}`);
      }
      checkServerFrame(frame);
      session.inbox.push(frame);
    } catch (err) {
      this.violations.push(err as Error);
    }
  }

  /** The session's socket opened: it is in its room's hub (it gets messages addressed to it). */
  async connect(session: FakeSession): Promise<RoomHub> {
    return this.hubs.add(session);
  }

  private hubOf(session: FakeSession): RoomHub {
    const hub = this.hubs.get(session.room.roomId);
    if (!hub?.sessions.has(session.id)) throw new Error(`participant ${session.id} is not connected`);
    return hub;
  }

  /**
   * Connects (if needed) and joins: through the control module's `join` when the tester runs it,
   * otherwise as that join would: the session is marked joined and every module is asked for its
   * join-time data (which no `join_success` carries here).
   */
  async join(session: FakeSession, displayName = session.displayName ?? `Participant ${session.id.slice(0, 8)}`): Promise<void> {
    if (!this.hubs.get(session.room.roomId)?.sessions.has(session.id)) await this.connect(session);
    if (this.modules.has('control')) {
      await this.command(session, 'control', { action: 'join', display_name: displayName });
    } else {
      session.state = 'joined';
      session.displayName = displayName;
      session.joinedAt = new Date(this.scheduler.now()).toISOString();
      const hub = this.hubOf(session);
      for (const module of this.modules.values()) await module.joinData?.(session, hub);
    }
    await this.flush();
  }

  /**
   * A command as the connection hands it on: validated, after the session's previous command, and
   * only from joined sessions except control and echo.
   */
  async command(session: FakeSession, namespace: string, payload: CommandPayload): Promise<void> {
    const frame = { namespace, payload };
    const validate = commandValidators[namespace]?.[payload.action] ?? commandValidators[namespace]?.['*'];
    if (!validateClientEnvelope(frame) || !validate?.(frame)) {
      throw new Error(`the connection would refuse ${JSON.stringify(frame)}: ${JSON.stringify(validate?.errors ?? validateClientEnvelope.errors)}`);
    }
    if (!session.room.tariff.enabled_modules.includes(namespace)) throw new Error(`the room's tariff has no ${namespace} module`);
    if (!session.socketOpen) throw new Error(`participant ${session.id}'s socket is closed`);
    await this.enqueue(session, async () => {
      if (!session.socketOpen) return; // closed while waiting its turn: the connection drops it
      if (!BEFORE_JOIN.has(namespace) && session.state !== 'joined') throw new Error(`the connection answers not_yet_joined to ${namespace}`);
      await this.module(namespace).handleCommand(session, payload, this.hubOf(session));
    });
    await this.flush();
  }

  /** The client closed the session's socket; see `depart`. */
  async leave(session: FakeSession, reason: LeaveReason = 'quit'): Promise<void> {
    this.hubOf(session); // leaving a session never connected is the test's mistake
    await this.depart(session, reason);
    await this.flush();
  }

  private queueOf(session: FakeSession) {
    let queue = this.queues.get(session);
    if (!queue) this.queues.set(session, (queue = { tail: Promise.resolve() }));
    return queue;
  }

  private enqueue(session: FakeSession, task: () => Promise<void>): Promise<void> {
    const queue = this.queueOf(session);
    const run = queue.tail.then(task);
    queue.tail = run.catch(() => undefined);
    return run;
  }

  /**
   * The session's socket closed, handled as the connection does: after the command in progress, a
   * participant in the room or its waiting room departs through the control module when the tester
   * runs it (otherwise every module's `participantLeft` runs, the room being empty when no other
   * joined session is in its hubs on this instance and its siblings), then the session is closed
   * and leaves its hub.
   */
  private depart(session: FakeSession, reason: LeaveReason): Promise<void> {
    session.socketOpen = false;
    const queue = this.queueOf(session);
    queue.departure ??= this.enqueue(session, async () => {
      const hub = this.hubs.get(session.room.roomId);
      if (!hub?.sessions.has(session.id)) {
        session.state = 'closed';
        return;
      }
      const control = this.modules.get('control') as ControlModule | undefined;
      if (PRESENT.has(session.state)) {
        if (control) {
          await control.disconnect(session, hub, reason);
        } else {
          const roomEmpty = ![...this.family].some((instance) =>
            [...(instance.hubs.get(hub.roomId)?.sessions.values() ?? [])].some((other) => other !== session && other.state === 'joined'),
          );
          for (const module of this.modules.values()) await module.participantLeft?.(session, hub, { roomEmpty });
        }
      }
      session.state = 'closed';
      await this.hubs.remove(session);
    });
    return queue.departure;
  }

  /** Moves the clock, running what falls due (a countdown's expiry) and delivering what that publishes. */
  async advance(ms: number): Promise<void> {
    await this.scheduler.advance(ms, settle);
    await this.flush();
  }

  /**
   * Lets every published message reach its hubs and sessions and runs the tasks due now; fails on a
   * frame the contract does not allow.
   */
  async flush(): Promise<void> {
    await settle();
    await this.scheduler.advance(0, settle);
    this.throwViolations();
  }

  /** Takes the frames the session was sent since the last call (of `namespace` only, when given). */
  sent(session: FakeSession, namespace?: string): ServerFrame[] {
    this.throwViolations();
    const taken = session.inbox.filter((frame) => namespace === undefined || frame.namespace === namespace);
    for (const frame of taken) session.inbox.splice(session.inbox.indexOf(frame), 1);
    return taken;
  }

  /** The payloads of `sent`, for comparing whole events at once. */
  payloads(session: FakeSession, namespace?: string): Record<string, unknown>[] {
    return this.sent(session, namespace).map((frame) => frame.payload);
  }

  private throwViolations(): void {
    const [first] = this.violations;
    if (first) throw first;
  }

  /** Closes the modules (as a shutdown, without departures) and the bus unless it is a sibling's. */
  async close(): Promise<void> {
    for (const module of this.modules.values()) await module.close?.();
    if (this.ownsBus) await this.bus.close();
    this.throwViolations();
  }
}

export const createModuleTester = (options: ModuleTesterOptions = {}) => new ModuleTester(options);

/** The bus delivers in microtasks, module work chains promises: a few turns of the loop drain both. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}
