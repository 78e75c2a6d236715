/**
 * The `/signaling` entry point (docs/architecture.md §6): takes the HTTP server's upgrade requests, answers
 * every rejection as plain HTTP with the error body before the upgrade, and turns an accepted one
 * into a Connection. Order: the request is a WebSocket opening → the header offers an accepted
 * protocol and a ticket → the ticket is taken from the store (single use, on any instance) → its
 * room still exists → upgrade, echoing only the chosen protocol.
 *
 * It also owns what the connections share: the bus (Redis or in-process), the room hubs, the
 * modules and their stores (room-stores.ts), and (with Redis) this instance's liveness
 * (src/redis/instance-liveness.ts). Its services (room entry, the webhook outbox) come from the
 * composition root; it holds no database. `close()` closes every socket with 1001 and lets each
 * participant leave as usual.
 */
import type { IncomingMessage, Server } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Redis } from 'ioredis';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Config } from '../config/schema.js';
import type { RoomEntryService } from '../domain/rooms/room-entry.service.js';
import type { TariffCatalog } from '../domain/tariffs/tariff-catalog.js';
import type { WebhookOutbox } from '../domain/webhooks/outbox.js';
import type { Unreachable } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { createLocalBus } from './bus/local.js';
import { createRedisBus } from './bus/redis.js';
import { timedBus } from './bus/timed.js';
import { Connection } from './connection.js';
import { checkUpgradeRequest, handshakeErrors, parseHandshake } from './handshake.js';
import { startInstanceLiveness } from '../redis/instance-liveness.js';
import { createSocketCaps, sourceAddress } from './socket-caps.js';
import { createSignalingModules } from './modules/index.js';
import type { MediaServers } from '../media/media-servers.js';
import { createSignalingWebhooks, SIGNALING_WEBHOOKS_DEFAULTS } from './webhooks.js';
import { loadRoomContext, type ParticipantContext, type RoomContext } from './room-context.js';
import { RoomHubs } from './room-hub.js';
import { createRoomStores } from './room-stores.js';
import type { Scheduler } from './scheduler.js';
import type { SignalingStore } from '../domain/tickets/signaling-store.js';
import type { Acquired } from '../domain/caps/open-counter.js';

export interface SignalingServerDeps {
  config: Config;
  tariffs: TariffCatalog;
  /** Who may enter a room (a ticket's redemption) and bans (the moderation module). */
  roomEntry: RoomEntryService;
  /** Where the webhook events of signaling are queued, each in a transaction of its own. */
  webhookOutbox: WebhookOutbox;
  /** Which backing service, if any, an error says cannot be reached (a ticket's redemption answers 503). */
  unreachable: Unreachable;
  signalingStore: SignalingStore;
  /** Set when instances share state: the bus and the modules' state then live in Redis. */
  redis?: Redis;
  /** The Janus servers, when `[media] janus_urls` names any: the media module runs on them. */
  mediaServers?: MediaServers;
  logger: Logger;
  scheduler: Scheduler;
  /** Where the bus's timings and the subscriber connection's errors are recorded. */
  metrics: Pick<Metrics, 'bus' | 'redisError' | 'webhookEventDropped'>;
}

/** What is open here now, for the metrics. */
export interface SignalingStats {
  sockets: number;
  /** Rooms with at least one participant joined on this instance. */
  rooms: number;
  /** Participants joined (not those connected only, or in the waiting room). */
  participants: number;
}

export interface SignalingServer {
  /** Answers the server's upgrade requests to `/signaling`. */
  attach(server: Server): void;
  /** Counted when asked (a scrape), not kept up to date on every join and leave. */
  stats(): SignalingStats;
  /** Refuses new sockets, closes the open ones with 1001, and waits until every participant has left. */
  close(): Promise<void>;
}

const PATH = '/signaling';
/** How long closing sockets get to answer the close frame at shutdown before they are cut. */
const CLOSE_GRACE_MS = 2_000;
/** How long the webhook events of signaling still waiting for the database get at shutdown. */
const WEBHOOK_FLUSH_MS = 5_000;

export function createSignalingServer(deps: SignalingServerDeps): SignalingServer {
  const { config, tariffs, roomEntry, webhookOutbox, unreachable, signalingStore, redis, mediaServers, logger, scheduler, metrics } = deps;
  const limits = config.signaling;
  if (limits.max_message_bytes > limits.max_frame_bytes) {
    throw new Error('signaling.max_message_bytes must not exceed signaling.max_frame_bytes');
  }
  // a client answers each ping when it comes: a timeout no longer than the interval drops every client
  if (limits.pong_timeout_ms <= limits.ping_interval_ms) {
    throw new Error('signaling.pong_timeout_ms must exceed signaling.ping_interval_ms');
  }
  // one late refresh must not let a live instance's key expire (it would be taken for dead)
  if (limits.instance_refresh_ms * 2 > limits.instance_ttl_ms) {
    throw new Error('signaling.instance_refresh_ms must be at most half of signaling.instance_ttl_ms');
  }
  const log = logger.child({ component: 'signaling' });
  const bus = timedBus(redis ? createRedisBus(redis, log, metrics.redisError) : createLocalBus(log), metrics.bus);
  // shared state: this instance's records name it, so that the others can clean up after it should it die
  const liveness = redis ? startInstanceLiveness(redis, { ttlMs: limits.instance_ttl_ms, refreshMs: limits.instance_refresh_ms }, log) : undefined;
  const webhooks = createSignalingWebhooks(webhookOutbox, log, { ...SIGNALING_WEBHOOKS_DEFAULTS, onDrop: metrics.webhookEventDropped });
  const stores = createRoomStores(redis, liveness);
  const media = mediaServers ? { servers: mediaServers, config: config.media } : undefined;
  const modules = createSignalingModules({ config: limits, roomEntry, stores, liveness, bus, hubs: () => hubs, scheduler, logger: log, webhooks }, media);
  const hubs = new RoomHubs(bus, modules.byNamespace, log);
  const socketCaps = createSocketCaps(config.signaling_caps, redis && liveness ? { redis, liveness } : undefined);
  const connectionDeps = { config: limits, hubs, modules, signalingStore, scheduler, logger: log, instanceId: liveness?.id };

  /** The protocol chosen for each request being upgraded, for ws's handleProtocols. */
  const chosen = new WeakMap<IncomingMessage, string>();
  const wss = new WebSocketServer({
    noServer: true,
    clientTracking: false,
    // off: room events are written beside ws (socket-writes.ts), which needs ws to write each frame at once, uncompressed
    perMessageDeflate: false,
    maxPayload: limits.max_frame_bytes,
    handleProtocols: (_offered, request) => chosen.get(request) ?? false,
  });
  const connections = new Set<Connection>();
  const upgrading = new Set<Promise<void>>();
  let closing = false;

  /** Everything before the upgrade; a rejection is answered here, never left hanging. */
  async function upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    // only before Node 24.9, which has no shouldUpgradeCallback: every upgrade request comes here
    if (!isSignalingRequest(request)) {
      const elsewhere = handshakeErrors.routeNotFound(request.method ?? 'GET', pathOf(request.url));
      return reject(socket, elsewhere.status, elsewhere.body);
    }
    const notAnOpening = checkUpgradeRequest(request);
    if (notAnOpening) return reject(socket, notAnOpening.status, notAnOpening.body);
    const offer = parseHandshake(request.headersDistinct['sec-websocket-protocol'], limits.protocols);
    if (!offer.ok) return reject(socket, offer.error.status, offer.error.body);
    // refused before the ticket is taken, so that it still opens a socket on another instance
    if (closing) return rejectClosing(socket);

    let context: { room: RoomContext; participant: ParticipantContext } | undefined;
    let held: Acquired | undefined;
    try {
      const ticket = await signalingStore.takeTicket(offer.ticket);
      context = ticket && (await loadRoomContext(roomEntry, tariffs, ticket));
      // counted from here until the socket closes, on every path (a refusal below releases at once)
      if (context) held = await socketCaps.acquire(context.participant.who, sourceAddress(request, config.http.trust_proxy));
    } catch (err) {
      // the database or Redis away is 503, as in the HTTP API: the client starts again once it is back
      const down = unreachable(err) !== undefined;
      log.error({ err }, 'redeeming a signaling ticket failed');
      const refusal = down ? handshakeErrors.unavailable() : handshakeErrors.internal();
      return reject(socket, refusal.status, refusal.body);
    }
    // a ticket whose room was deleted since is as good as none
    if (!context || !held) {
      const invalid = handshakeErrors.invalidTicket();
      return reject(socket, invalid.status, invalid.body);
    }
    if (!held.acquired) {
      const refusal = handshakeErrors.tooManyConnections(held.key.limit);
      return reject(socket, refusal.status, refusal.body);
    }
    const { release } = held;
    socket.once('close', () => void release().catch((err: unknown) => log.warn({ err }, 'releasing a socket cap failed')));
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- close() may set it while the ticket was taken (awaited above)
    if (closing) return rejectClosing(socket); // began shutting down while the ticket was taken
    if (socket.destroyed) return void release(); // the client gave up while the ticket was redeemed

    const { room, participant } = context;
    chosen.set(request, offer.protocol);
    // ws parses the header again, strictly (no empty or repeated entries); the choice is made, so it sees only that
    request.headers['sec-websocket-protocol'] = offer.protocol;
    wss.handleUpgrade(request, socket, head, (ws: WebSocket) => {
      const connection = new Connection(ws, room, participant, connectionDeps, socket);
      connections.add(connection);
      void connection.done.then(() => connections.delete(connection));
    });
  }

  function onUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    // the HTTP server stops watching the socket on upgrade: a reset while the ticket is redeemed, or
    // while a refusal is written, must not crash the process (after the upgrade ws listens too)
    socket.on('error', (err) => {
      log.debug({ err }, 'signaling socket error');
      socket.destroy();
    });
    const pending = upgrade(request, socket, head)
      .catch((err: unknown) => {
        log.error({ err }, 'signaling upgrade failed');
        socket.destroy();
      })
      .finally(() => upgrading.delete(pending));
    upgrading.add(pending);
  }

  return {
    attach(server) {
      server.on('upgrade', onUpgrade);
    },
    stats() {
      let rooms = 0;
      let participants = 0;
      for (const hub of hubs.all()) {
        let joined = 0;
        for (const session of hub.sessions.values()) if (session.state === 'joined') joined++;
        participants += joined;
        if (joined > 0) rooms++;
      }
      return { sockets: connections.size, rooms, participants };
    },
    async close() {
      closing = true;
      await Promise.allSettled(upgrading);
      for (const connection of connections) connection.leave('server_shutdown');
      const cut = setTimeout(() => {
        for (const connection of connections) connection.terminate();
      }, CLOSE_GRACE_MS);
      await Promise.allSettled([...connections].map((connection) => connection.done));
      clearTimeout(cut);
      wss.close();
      for (const module of modules.byNamespace.values()) {
        await module.close?.().catch((err: unknown) => log.error({ err, namespace: module.namespace }, 'closing a signaling module failed'));
      }
      // the departures' events too; the database closes after this
      await webhooks.close(WEBHOOK_FLUSH_MS);
      // after the departures: a record left behind (a store that failed) is then the others' to sweep
      await liveness?.close();
      await bus.close();
    },
  };
}

/**
 * Whether an upgrade request is the signaling server's (the HTTP server's `shouldUpgradeCallback`):
 * upgrades elsewhere (`Upgrade: h2c` from curl …) are ordinary requests for the HTTP app.
 */
export function isSignalingRequest(request: IncomingMessage): boolean {
  return pathOf(request.url) === PATH;
}

function pathOf(url: string | undefined): string {
  const path = url ?? '/';
  const query = path.indexOf('?');
  return query === -1 ? path : path.slice(0, query);
}

/** 503: the instance is shutting down (another instance may take the client). */
function rejectClosing(socket: Duplex): void {
  const refusal = handshakeErrors.shuttingDown();
  reject(socket, refusal.status, refusal.body);
}

/** A plain HTTP answer with a JSON error body, then the socket is closed. */
function reject(socket: Duplex, status: number, body: object): void {
  if (socket.destroyed) return;
  const json = JSON.stringify(body);
  socket.once('finish', () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
      'Connection: close\r\n' +
      'Content-Type: application/json\r\n' +
      'X-Content-Type-Options: nosniff\r\n' +
      `Content-Length: ${Buffer.byteLength(json)}\r\n` +
      '\r\n' +
      json,
  );
}
