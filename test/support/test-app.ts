/**
 * A real Convene instance for a test file: the real HTTP server on 127.0.0.1 port 0, the test OIDC
 * issuer, and the test database (PGlite in memory, or a fresh PostgreSQL database when DATABASE_URL
 * is set). Every answer that goes through `api()` or `request()` is checked against the contract.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { Kysely } from 'kysely';
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { paths } from '../../generated/openapi.js';
import { openapiDocument } from '../../generated/openapi-document.js';
import type { OperationId } from '../../generated/operations.js';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import type { DB } from '../../src/db/schema.js';
import { buildRoutes } from '../../src/http/app.js';
import { createConvene, type Convene } from '../../src/server.js';
import { pino } from 'pino';
import { checkResponse, operationFor } from './contract.js';
import { createTestDatabase } from './database.js';
import { startTestIssuer, type TestIssuer } from './oidc-issuer.js';

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> : T[K] };

export interface TestUser {
  id: string;
  name: string;
  email: string;
  accessToken: string;
  idToken: string;
}

export interface TestApp {
  url: string;
  issuer: TestIssuer;
  config: Config;
  convene: Convene;
  /** A typed client whose every answer is checked against the contract; `token` as Bearer. */
  api(token?: string): Client<paths>;
  /** A raw request (any method, path, headers, body), checked against the contract when the route is one of its operations. */
  request(method: string, path: string, init?: { headers?: Record<string, string>; body?: string | Buffer }): Promise<Response & { text_: string }>;
  /** Logs a user in through POST /v1/auth/login and returns their tokens and id. */
  login(name: string, claims?: Record<string, unknown>): Promise<TestUser>;
  /** Empties every table (between tests). */
  reset(): Promise<void>;
  /** Starts another instance with other configuration over the same database and issuer. */
  withConfig(overrides: DeepPartial<Config>): Promise<TestApp>;
  close(): Promise<void>;
}

const contractCheck: Middleware = {
  async onResponse({ request, response, schemaPath }) {
    const operationId = operationFor(request.method, schemaPath);
    checkResponse(operationId, {
      status: response.status,
      contentType: response.headers.get('content-type'),
      body: await response.clone().text(),
    });
    return response;
  },
};

export async function startTestApp(overrides: DeepPartial<Config> = {}): Promise<TestApp> {
  const issuer = await startTestIssuer({ clientId: 'convene' });
  const db = await createTestDatabase();
  const started = await instance(issuer, db, overrides);
  const closeAll = started.close;
  started.close = async () => {
    await closeAll();
    await db.close();
    await issuer.close();
  };
  return started;
}

/** The app's database, for writing fixtures straight into it and reading what a request stored. */
export const dbOf = (app: TestApp): Kysely<DB> => app.convene.database.db;

/**
 * Registers the hooks most integration test files share: one app for the file (started before all
 * tests, closed after all) and an empty database before each test. The answer exists at once, so
 * the file holds it in a const; the first beforeAll fills it in (the app's methods are closures,
 * not `this`-bound, so copying them over works). Register further beforeEach hooks after this call.
 */
export function useTestApp(overrides: DeepPartial<Config> = {}): TestApp {
  const app = {} as TestApp;
  beforeAll(async () => {
    Object.assign(app, await startTestApp(overrides));
  });
  afterAll(() => app.close?.());
  beforeEach(() => app.reset());
  return app;
}

async function instance(issuer: TestIssuer, db: Awaited<ReturnType<typeof createTestDatabase>>, overrides: DeepPartial<Config>): Promise<TestApp> {
  // the test's overrides are merged into each of these sections, so `oidc: { admin_api_url }` keeps the issuer
  const base: Record<string, object> = {
    http: { host: '127.0.0.1', port: 0 },
    database: { in_memory: true },
    // the web app's client and the call-in gateway's, as a deployment names them (the issuer's tokens carry them as azp)
    oidc: { issuer: issuer.issuer, client_id: 'convene', authorized_parties: ['convene', 'gateway'] },
    dev: { identity_provider: false },
    logging: { level: 'silent' },
  };
  const merged: Record<string, unknown> = { ...overrides };
  for (const [section, values] of Object.entries(base)) merged[section] = { ...values, ...(overrides as Record<string, object>)[section] };
  const config = loadConfig({
    file: false, // independent of a developer's ./convene.toml
    env: {},
    overrides: merged,
  });
  const convene = await createConvene(config, { database: db.database, logger: pino({ level: 'silent' }) });
  const address: AddressInfo = await convene.listen(0, '127.0.0.1');
  const url = `http://127.0.0.1:${address.port}`;

  const app: TestApp = {
    url,
    issuer,
    config,
    convene,
    api(token) {
      const client = createClient<paths>({ baseUrl: `${url}/v1`, headers: token ? { authorization: `Bearer ${token}` } : {} });
      client.use(contractCheck);
      return client;
    },
    async request(method, path, init = {}) {
      const response = await fetch(`${url}${path}`, { method, headers: init.headers, body: init.body });
      const text = await response.text();
      const operationId = operationOf(method, path.split('?')[0]!);
      if (operationId) {
        checkResponse(operationId, { status: response.status, contentType: response.headers.get('content-type'), body: text });
      }
      return Object.assign(response, { text_: text });
    },
    async login(name, claims = {}) {
      const email = `${name}@example.test`;
      const base = { sub: `sub-${name}`, email, given_name: cap(name), family_name: 'Tester', ...claims };
      const idToken = await issuer.idToken(base);
      const accessToken = await issuer.accessToken({ sub: base.sub });
      const login = await app.api().POST('/auth/login', { body: { id_token: idToken } });
      if (login.response.status !== 200) throw new Error(`login of ${name} failed: ${login.response.status}`);
      const me = await app.api(accessToken).GET('/users/me');
      return { id: me.data!.id, name, email, accessToken, idToken };
    },
    reset: () => db.reset(),
    withConfig: (more) => instance(issuer, db, { ...overrides, ...more }),
    close: () => convene.close(),
  };
  return app;
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

// The service's own route table tells which operation a raw request belongs to (for checking it).
const routes = buildRoutes(openapiDocument).table;

function operationOf(method: string, path: string): OperationId | undefined {
  return routes.match(method, path).route?.operationId;
}
