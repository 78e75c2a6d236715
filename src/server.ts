/**
 * The one composition root: builds one Convene instance from a configuration: database (migrated),
 * identity, every domain service (once), the HTTP app and its server, with the `/signaling`
 * WebSocket on it. Handlers receive the services built here, never the database, the
 * configuration, a store or Redis; the signaling server receives its services (room entry, the
 * webhook outbox) from here too, never the database. cli/serve.ts listens and handles signals;
 * tests build instances on port 0.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from './config/schema.js';
import { isDatabaseDown, openDatabase, type Database } from './db/connect.js';
import { migrateToLatest } from './db/migrate.js';
import { sharedSecret } from './db/service-secrets.repository.js';
import { assetStorageFromConfig, type AssetStorage } from './domain/assets/asset-storage.js';
import { createAssetService } from './domain/assets/assets.service.js';
import { createCalendarFeedService } from './domain/calendar-feed/calendar-feed.service.js';
import { createCursorCodec } from './domain/events/cursor.js';
import { createEventInviteService } from './domain/events/event-invites.service.js';
import { createEventService } from './domain/events/events.service.js';
import { createHealthService } from './domain/health/health.service.js';
import { createIdentity, identityMode, type Identity } from './domain/identity/identity.js';
import { createInviteService, type InviteService } from './domain/invites/invites.service.js';
import { createLocalWindowCounter } from './domain/caps/window-counter.js';
import { createRedisWindowCounter } from './domain/caps/redis-window-counter.js';
import { createTicketCaps } from './domain/tickets/ticket-caps.js';
import { createStartService } from './domain/tickets/start.service.js';
import { devProviderFromConfig } from './domain/identity/dev-provider.js';
import { keycloakDirectoryFromConfig } from './domain/identity/keycloak-directory.js';
import { configuredTariffCatalog, loadTariffCatalog, storedTariffDefinitions } from './domain/tariffs/tariffs.repository.js';
import type { TariffCatalog } from './domain/tariffs/tariff-catalog.js';
import { createRoomEntryService } from './domain/rooms/room-entry.service.js';
import { createRoomService } from './domain/rooms/rooms.service.js';
import { createSipService } from './domain/sip/sip.service.js';
import { createStreamingTargetService } from './domain/streaming/streaming-targets.service.js';
import { turnCredentials } from './domain/turn/turn-credentials.js';
import { createUserService, type UserService } from './domain/users/users.service.js';
import { createWebhookOutbox } from './domain/webhooks/outbox.js';
import { createWebhookSubscriptionService } from './domain/webhooks/subscriptions.service.js';
import { createHttpApp } from './http/app.js';
import { errors, type Unreachable } from './errors.js';
import { errorBody } from './http/errors.js';
import { devIdentityRouter } from './http/dev-identity-routes.js';
import { createHandlers, type Services } from './http/handlers/index.js';
import { lingerIfBodyPending } from './http/lingering-close.js';
import { createLogger, type Logger } from './logger.js';
import { createMetrics } from './metrics.js';
import { isRedisDown } from './redis/redis.js';
import { pendingMailCount } from './domain/notifications/outbox.js';
import { createMailWorker, type MailWorker } from './domain/notifications/mail-worker.js';
import { createWebhookWorker, type WebhookWorker } from './domain/webhooks/delivery-worker.js';
import { systemClock, type Clock } from './domain/clock.js';
import { systemScheduler } from './signaling/scheduler.js';
import { createSignalingServer, isSignalingRequest, type SignalingServer } from './signaling/server.js';
import { sharedStateFromConfig, type SharedState } from './signaling/shared-state.js';
import { startJanusServers } from './media/janus-servers.js';
import type { MediaServers } from './media/media-servers.js';
import type { SignalingStore } from './domain/tickets/signaling-store.js';

export interface ConveneOptions {
  logger?: Logger;
  /** An already migrated database to use (and not close); otherwise one is opened from the configuration. */
  database?: Database;
  fetch?: typeof fetch;
  /** Time for expiring state (tickets, resumption, rate limits); tests inject one they can advance. */
  clock?: Clock;
}

export interface Convene {
  server: Server;
  database: Database;
  identity: Identity;
  /** Tickets and resumption records, shared with the signaling WebSocket. */
  signalingStore: SignalingStore;
  /** The `/signaling` WebSocket, attached to `server`. */
  signaling: SignalingServer;
  logger: Logger;
  /** Sends the e-mail outbox; absent without `[smtp] url` (the outbox is then kept, nothing lost). */
  mailWorker?: MailWorker;
  /** Sends the webhook outbox; started by `listen`. */
  webhookWorker: WebhookWorker;
  listen(port?: number, host?: string): Promise<AddressInfo>;
  /** Compiles all request validators now instead of on each operation's first request. */
  warmUp(): Promise<void>;
  /** Re-reads the tariffs stored with `convene tariffs create` (done every TARIFF_REFRESH_MS). */
  refreshTariffs(): Promise<void>;
  close(): Promise<void>;
}

/** How often an instance re-reads the stored tariffs, so that a created one is served without a restart. */
export const TARIFF_REFRESH_MS = 60_000;

export async function createConvene(config: Config, options: ConveneOptions = {}): Promise<Convene> {
  const logger = options.logger ?? createLogger(config.logging.level);
  // an identity setup that cannot run (the development provider in production) is refused before
  // the database is opened, created or migrated
  const mode = identityMode(config);
  const ownsDatabase = !options.database;
  const database =
    options.database ??
    (await openDatabase(config.database, {
      onIdleError: (err) => logger.warn({ err }, 'an idle database connection failed; the next query reconnects'),
      onEmbeddedFailure: (err) => logger.error({ err }, 'the embedded database failed: it stays down (503, not ready) until Convene restarts'),
    }));
  let closeShared: SharedState['close'] | undefined;
  let closeMedia: (() => Promise<void> | undefined) | undefined;
  try {
    if (ownsDatabase) await migrateToLatest(database.db);

    const devProvider = mode === 'dev' ? await devProviderFromConfig(config) : undefined;
    const identity = await createIdentity(config, { devProvider, fetch: options.fetch });
    // the configuration's tariffs and those created with `convene tariffs create`, as they are now
    // a database that is down at start (one the caller opened) must not stop the service: it answers
    // 503 until the database is back, and the stored tariffs come with the next refresh
    const tariffs = await loadTariffCatalog(database.db, config).catch((err: unknown) => {
      logger.warn({ err }, 'the stored tariffs could not be read; the configured ones serve until the next refresh');
      return configuredTariffCatalog(config);
    });
    const directory = config.endpoints.users_find_use_kc ? keycloakDirectoryFromConfig(config, options.fetch) : undefined;
    const users = createUserService({ db: database.db, config, tariffs, directory });
    const assetStorage = await assetStorageFromConfig(config);
    const clock = options.clock ?? systemClock;
    const metrics = createMetrics();
    const shared = sharedStateFromConfig(config, clock, logger, metrics.redisError);
    closeShared = () => shared.close();
    // Janus, when configured: a server that does not answer is tried again in the background
    const mediaServers = config.media.janus_urls.length > 0 ? await startJanusServers(config.media, logger) : undefined;
    closeMedia = () => mediaServers?.close();
    const invites = createInviteService({ db: database.db, rateLimiter: shared.rateLimiter, clock });

    const handlers = createHandlers(handlerServices({ config, database, identity, users, invites, tariffs, assetStorage, clock, shared, mediaServers }));
    const http = await createHttpApp({
      config,
      logger,
      auth: { identity, users, callInRole: config.oidc.call_in_role, invites },
      handlers,
      metrics,
      unreachable,
      extraRouters: devProvider ? [{ path: '/dev-idp', router: devIdentityRouter(devProvider) }] : [],
    });
    // From the start of close() a new request is answered 503 (a load balancer retries it elsewhere),
    // while the listener stays open for the signaling shutdown (whose new sockets get 503 as well);
    // requests under way finish.
    let closing = false;
    const server = createServer({ shouldUpgradeCallback: isSignalingRequest }, (req, res) => {
      lingerIfBodyPending(req);
      if (closing) refuseWhileClosing(req, res);
      else http.app(req, res);
    });
    server.keepAliveTimeout = 65_000; // longer than common load balancers' idle timeout
    const signaling = createSignalingServer({
      config,
      tariffs,
      roomEntry: createRoomEntryService({ db: database.db, callIn: config.call_in }),
      webhookOutbox: createWebhookOutbox(database.db),
      unreachable,
      signalingStore: shared.signalingStore,
      redis: shared.redis,
      mediaServers,
      logger,
      scheduler: systemScheduler(clock),
      metrics,
    });
    signaling.attach(server);
    const smtpUrl = config.smtp.url;
    const mailWorker = smtpUrl
      ? createMailWorker({ db: database.db, smtp: { url: smtpUrl, from: config.smtp.from }, logger, onFailure: metrics.mailFailed })
      : undefined;
    metrics.watch({
      signaling: () => signaling.stats(),
      databasePool: () => database.poolStats(),
      databaseErrors: () => database.errorCount(),
      pendingMail: () => pendingMailCount(database.db),
    });
    const webhookWorker = createWebhookWorker({ db: database.db, config: config.webhooks, logger });
    const refreshTariffs = async () => tariffs.replaceStored(await storedTariffDefinitions(database.db));
    const tariffRefresh = setInterval(() => {
      refreshTariffs().catch((err: unknown) => logger.warn({ err }, 'the stored tariffs could not be re-read; the ones read before stay'));
    }, TARIFF_REFRESH_MS).unref();

    return {
      server,
      database,
      identity,
      signalingStore: shared.signalingStore,
      signaling,
      logger,
      mailWorker,
      webhookWorker,
      listen(port = config.http.port, host = config.http.host) {
        return new Promise((resolve, reject) => {
          server.once('error', reject);
          server.listen(port, host, () => {
            server.off('error', reject);
            mailWorker?.start();
            webhookWorker.start();
            resolve(server.address() as AddressInfo);
          });
        });
      },
      warmUp: () => http.warmUp(),
      refreshTariffs,
      async close() {
        closing = true;
        clearInterval(tariffRefresh);
        // first, while the store and the bus still work: sockets close with 1001 and their participants leave
        await signaling.close();
        await mediaServers?.close(); // after the participants left: their handles are detached
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
          setTimeout(() => server.closeAllConnections(), 5_000).unref();
        });
        await mailWorker?.stop(); // lets the mail being sent finish and be marked
        await webhookWorker.stop(); // the same for webhook attempts (each bounded by [webhooks] timeout_ms)
        await identity.close();
        await assetStorage.close();
        await shared.close();
        if (ownsDatabase) await database.close();
      },
    };
  } catch (err) {
    await closeMedia?.(); // its sockets would keep the process alive
    await closeShared?.(); // its Redis connection would keep the process alive
    if (ownsDatabase) await database.close();
    throw err;
  }
}

interface ServiceParts {
  config: Config;
  database: Database;
  identity: Identity;
  users: UserService;
  invites: InviteService;
  tariffs: TariffCatalog;
  assetStorage: AssetStorage;
  clock: Clock;
  shared: SharedState;
  mediaServers?: MediaServers;
}

/** Every service the handlers use, each built once from the parts createConvene opened. */
function handlerServices(parts: ServiceParts): Services {
  const { config, database, identity, users, invites, tariffs, assetStorage, clock, shared, mediaServers } = parts;
  const { db } = database;
  const { redis } = shared;
  // shared through the database so that every instance reads every other's page cursors
  const cursorSecret = config.http.cursor_secret ?? (() => sharedSecret(db, 'page_cursors'));
  const ticketCaps = createTicketCaps(config.signaling_caps, redis ? createRedisWindowCounter(redis) : createLocalWindowCounter(clock));
  return {
    identity,
    users,
    invites,
    rooms: createRoomService({ db, tariffs, assetStorage, callIn: config.call_in }),
    sip: createSipService({ db }),
    streamingTargets: createStreamingTargetService(db),
    assets: createAssetService({ db, storage: assetStorage, tariffs }),
    events: createEventService({ db, config, cursors: createCursorCodec(cursorSecret), assetStorage }),
    eventInvites: createEventInviteService({ db, config }),
    calendarFeeds: createCalendarFeedService({ db, config, clock }),
    webhookSubscriptions: createWebhookSubscriptionService(db, config.webhooks),
    start: createStartService({ db, signalingStore: shared.signalingStore, rateLimiter: shared.rateLimiter, ticketCaps, clock }),
    turnServers: () => turnCredentials(config.turn, { clock }),
    health: createHealthService({
      pingDatabase: () => database.ping(),
      pingRedis: redis && (() => redis.ping()),
      mediaStatus: () => mediaServers?.status() ?? 'not_configured',
    }),
    publicUrl: config.http.public_url,
  };
}

/** The database and Redis each recognise their own failures; both transports are told which one an error names. */
const unreachable: Unreachable = (err) => (isDatabaseDown(err) ? 'database' : isRedisDown(err) ? 'redis' : undefined);

/**
 * 503 to a request that came after shutdown began, its connection closing after it: the error body
 * (`/ready` included: a load balancer takes the instance out of rotation on it), or for the health
 * probe its own body (the contract's `Health`: this instance is going away, while
 * its database still answers), so that a probe reads `status` as always.
 */
function refuseWhileClosing(req: IncomingMessage, res: ServerResponse): void {
  const health = req.url === '/health' || req.url?.startsWith('/health?');
  const body = JSON.stringify(health ? { status: 'unavailable', database: 'up' } : errorBody(errors.serviceUnavailable('The server is shutting down')));
  res.writeHead(503, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-request-id': randomUUID(),
    'x-content-type-options': 'nosniff',
    connection: 'close',
  });
  res.end(body);
}
