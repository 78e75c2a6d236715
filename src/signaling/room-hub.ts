/**
 * This instance's part of a room: its local sessions and its subscription to the room channel. A
 * hub exists while at least one of the room's participants is connected here; every message of the
 * room (from any instance) reaches it through the bus, is shown to the module it belongs to (the
 * timer arms its expiry on `started`), and is then sent to the local sessions in its audience, as
 * one frame serialised once for all of them (a room of thousands gets the timer's `started` for the
 * cost of one JSON.stringify and one write per socket).
 */
import type { Logger } from '../logger.js';
import type { RoomMessage, SignalingBus } from './bus/signaling-bus.js';
import type { EventPayload, Session, SharedFrame } from './session.js';

/** A server frame's namespace and payload (and the payload's JSON, when its maker wrote it already: Session.send). */
export interface Frame {
  namespace: string;
  payload: EventPayload;
  payloadJson?: string;
}

/**
 * What happens to a hub, as a module hears it through `HubModule.onHubEvent`: `opened`, the first
 * local session of the room arrived on this instance (the hub is subscribed); `closed`, the last one
 * left (the hub no longer hears the room); `message`, a room message of the module's own namespace
 * reached the hub, before it is sent to the local sessions.
 */
export type HubEvent =
  | { readonly type: 'opened'; readonly hub: RoomHub }
  | { readonly type: 'closed'; readonly hub: RoomHub }
  | { readonly type: 'message'; readonly hub: RoomHub; readonly message: RoomMessage };

/**
 * A module as its room hubs see it (modules/module.ts's SignalingModule is one): one entry for what
 * happens to a hub, and one delivery filter. The hub knows modules by this shape only, so that
 * modules may use the hub without a loop between them.
 *
 * The filter is not an event on purpose: it is a question asked for every local session in a
 * message's audience (a room of thousands asks it thousands of times per message), so it stays a
 * plain call that returns a boolean and allocates nothing, where an event would build an object per
 * session.
 */
export interface HubModule {
  readonly namespace: string;
  /**
   * The module's one entry for what happens to a hub. The hub waits for `opened` only, module after
   * module: a failure closes the hub again and fails the arrival that opened it. `closed` and
   * `message` are handled at once, as the hub goes on without waiting (a closed hub's room may open
   * again at the next arrival; messages are delivered in the order they come): a failure, thrown or
   * rejected, is logged, and the other modules still hear the hub close, or the message is still
   * delivered.
   */
  onHubEvent?(event: HubEvent): void | Promise<void>;
  /**
   * The delivery filter: true when a local session in the message's audience should not get it after
   * all (a duplicate, or an order for the instances: a moderator's command the target's instance
   * carries out). Asked for messages of this namespace only.
   */
  withholds?(session: Session, message: RoomMessage): boolean;
}

/** A room message on its way to local sessions, with the frame they share. */
interface Delivery {
  message: RoomMessage;
  frame: SharedFrame;
}

export class RoomHub {
  readonly sessions = new Map<string, Session>();
  /** Per session being let in: the room messages that reached it meanwhile, sent after its answer. */
  private readonly held = new Map<Session, Delivery[]>();
  private unsubscribe?: () => Promise<void>;

  constructor(
    readonly roomId: string,
    private readonly bus: SignalingBus,
    private readonly modules: ReadonlyMap<string, HubModule>,
    private readonly logger: Logger,
  ) {}

  /** Sends a message to its audience in the room, on every instance (this one included). */
  publish(message: RoomMessage): Promise<void> {
    return this.bus.publish(this.roomId, message);
  }

  /**
   * Keeps the room's messages for the session back until `release` (or `drop`). A participant
   * becomes a recipient before the read of what it is told it joins (so that nothing sent meanwhile,
   * on any instance, is missed), yet that answer (`join_success`, `in_waiting_room`) must be its
   * first frame.
   */
  hold(session: Session): void {
    this.held.set(session, []);
  }

  /** Sends the step's answer, then what was kept back, in order (less what a module withholds as shown already). */
  release(session: Session, answer: Frame): void {
    const kept = this.held.get(session) ?? [];
    this.held.delete(session);
    session.send(answer.namespace, answer.payload, answer.payloadJson);
    for (const delivery of kept) this.sendTo(session, delivery);
  }

  /** Whether the session is between `hold` and `release`/`drop`: entering, its record maybe not written yet. */
  isEntering(session: Session): boolean {
    return this.held.has(session);
  }

  /** Stops holding; what was kept back is dropped (the participant did not get in after all). */
  drop(session: Session): void {
    this.held.delete(session);
  }

  private sendTo(session: Session, { message, frame }: Delivery): void {
    if (this.modules.get(message.namespace)?.withholds?.(session, message)) return;
    if (session.sendShared) session.sendShared(frame);
    else session.send(frame.namespace, frame.payload);
  }

  /** The local sessions in a message's audience (an array, not a generator: it runs per event for every participant here). */
  private audienceOf(message: RoomMessage): Session[] {
    const { audience } = message;
    if (audience.to === 'participant') {
      const session = this.sessions.get(audience.id);
      return session && session.state !== 'closed' ? [session] : [];
    }
    const audienceSessions: Session[] = [];
    for (const session of this.sessions.values()) {
      if (session.state !== 'joined') continue;
      if (audience.to === 'moderators' ? session.role === 'moderator' : session.participant.id !== audience.except) audienceSessions.push(session);
    }
    return audienceSessions;
  }

  private deliver(message: RoomMessage): void {
    const module = this.modules.get(message.namespace);
    if (module) this.tell(module, { type: 'message', hub: this, message }, 'a module failed on a room message');
    const delivery: Delivery = { message, frame: { namespace: message.namespace, payload: message.payload } };
    for (const session of this.audienceOf(message)) {
      const kept = this.held.get(session);
      if (kept) kept.push(delivery);
      else this.sendTo(session, delivery);
    }
  }

  /** @internal RoomHubs opens and closes hubs. A hub that fails to open is closed again (no subscription left behind). */
  async open(): Promise<void> {
    this.unsubscribe = await this.bus.subscribe(this.roomId, (message) => this.deliver(message));
    const opened: HubEvent = { type: 'opened', hub: this };
    try {
      for (const module of this.modules.values()) await module.onHubEvent?.(opened);
    } catch (err) {
      await this.close();
      throw err;
    }
  }

  /** @internal */
  async close(): Promise<void> {
    const closed: HubEvent = { type: 'closed', hub: this };
    for (const module of this.modules.values()) this.tell(module, closed, 'a module failed on a closing hub');
    await this.unsubscribe?.();
  }

  /** Shows a module an event the hub does not wait for: a failure, thrown or rejected, is logged, and the hub goes on. */
  private tell(module: HubModule, event: HubEvent, failure: string): void {
    try {
      const handling = module.onHubEvent?.(event);
      if (handling) handling.catch((err: unknown) => this.logFailure(module, failure, err));
    } catch (err) {
      this.logFailure(module, failure, err);
    }
  }

  private logFailure(module: HubModule, failure: string, err: unknown): void {
    this.logger.error({ err, roomId: this.roomId, namespace: module.namespace }, failure);
  }
}

/** The hubs of this instance, one per room with local sessions. */
export class RoomHubs {
  private readonly hubs = new Map<string, { hub: RoomHub; ready: Promise<void> }>();

  constructor(
    private readonly bus: SignalingBus,
    private readonly modules: ReadonlyMap<string, HubModule>,
    private readonly logger: Logger,
  ) {}

  /** Adds a session to its room's hub, opening the hub (and its subscription) first if needed. */
  async add(session: Session): Promise<RoomHub> {
    const roomId = session.room.roomId;
    for (;;) {
      const entry = this.hubs.get(roomId) ?? this.open(roomId);
      await entry.ready;
      // the room's last session may have left while this one waited, closing the hub: open a new one
      if (this.hubs.get(roomId) !== entry) continue;
      entry.hub.sessions.set(session.participant.id, session);
      return entry.hub;
    }
  }

  private open(roomId: string): { hub: RoomHub; ready: Promise<void> } {
    const hub = new RoomHub(roomId, this.bus, this.modules, this.logger);
    const entry = { hub, ready: hub.open() };
    this.hubs.set(roomId, entry);
    entry.ready.catch(() => {
      if (this.hubs.get(roomId) === entry) this.hubs.delete(roomId);
    });
    return entry;
  }

  /** Removes a session; the last one out closes the hub. */
  async remove(session: Session): Promise<void> {
    const roomId = session.room.roomId;
    const entry = this.hubs.get(roomId);
    if (!entry || entry.hub.sessions.get(session.participant.id) !== session) return;
    entry.hub.sessions.delete(session.participant.id);
    entry.hub.drop(session);
    if (entry.hub.sessions.size > 0) return;
    this.hubs.delete(roomId);
    await entry.hub.close();
  }

  get(roomId: string): RoomHub | undefined {
    return this.hubs.get(roomId)?.hub;
  }

  /** Every hub of this instance (those still opening included: their sessions are not joined yet). */
  *all(): Iterable<RoomHub> {
    for (const entry of this.hubs.values()) yield entry.hub;
  }
}
