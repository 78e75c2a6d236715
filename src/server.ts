/**
 * Builds one Convene instance from a configuration: database (migrated), identity, domain services,
 * the HTTP app and its server. main.ts listens and handles signals; tests build instances on port 0.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from './config/schema.js';
import { openDatabase, type Database } from './db/connect.js';
import { migrateToLatest } from './db/migrate.js';
import { createIdentity, identityMode, type Identity } from './domain/identity/identity.js';
import { devProviderFromConfig } from './domain/identity/dev-provider.js';
import { keycloakDirectoryFromConfig } from './domain/identity/keycloak-directory.js';
import { createTariffCatalog } from './domain/tariffs/tariff-catalog.js';
import { createUserService } from './domain/users/users.service.js';
import { createHttpApp } from './http/app.js';
import { devIdentityRouter } from './http/dev-identity-routes.js';
import { createHandlers } from './http/handlers/index.js';
import { createLogger, type Logger } from './logger.js';

export interface ConveneOptions {
  logger?: Logger;
  /** An already migrated database to use (and not close); otherwise one is opened from the configuration. */
  database?: Database;
  fetch?: typeof fetch;
}

export interface Convene {
  server: Server;
  database: Database;
  identity: Identity;
  logger: Logger;
  listen(port?: number, host?: string): Promise<AddressInfo>;
  /** Compiles all request validators now instead of on each operation's first request. */
  warmUp(): Promise<void>;
  close(): Promise<void>;
}

export async function createConvene(config: Config, options: ConveneOptions = {}): Promise<Convene> {
  const logger = options.logger ?? createLogger(config.logging.level);
  const ownsDatabase = !options.database;
  const database =
    options.database ??
    (await openDatabase(config.database, {
      onIdleError: (err) => logger.warn({ err }, 'an idle database connection failed; the next query reconnects'),
    }));
  try {
    if (ownsDatabase) await migrateToLatest(database.db);

    const devProvider = identityMode(config) === 'dev' ? await devProviderFromConfig(config) : undefined;
    const identity = await createIdentity(config, { devProvider, fetch: options.fetch });
    const tariffs = createTariffCatalog(config.tariffs);
    const directory = config.endpoints.users_find_use_kc ? keycloakDirectoryFromConfig(config, options.fetch) : undefined;
    const users = createUserService({ db: database.db, config, tariffs, directory });

    const handlers = createHandlers({ config, database, identity, users, tariffs });
    const http = await createHttpApp({
      config,
      logger,
      auth: { identity, users, callInRole: config.oidc.call_in_role },
      handlers,
      extraRouters: devProvider ? [{ path: '/dev-idp', router: devIdentityRouter(devProvider) }] : [],
    });
    const server = createServer(http.app);
    server.keepAliveTimeout = 65_000; // longer than common load balancers' idle timeout

    return {
      server,
      database,
      identity,
      logger,
      listen(port = config.http.port, host = config.http.host) {
        return new Promise((resolve, reject) => {
          server.once('error', reject);
          server.listen(port, host, () => {
            server.off('error', reject);
            resolve(server.address() as AddressInfo);
          });
        });
      },
      warmUp: () => http.warmUp(),
      async close() {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
          setTimeout(() => server.closeAllConnections(), 5_000).unref();
        });
        await identity.close();
        if (ownsDatabase) await database.close();
      },
    };
  } catch (err) {
    if (ownsDatabase) await database.close();
    throw err;
  }
}
