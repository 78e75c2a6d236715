/**
 * A Convene instance whose log a test reads: the service's own logger (`createLogger`, with the
 * redaction it has in production) at `trace`, writing into memory instead of standard output.
 *
 * It runs beside a test app (`startTestApp`), over the same database and issuer, and offers the
 * same interface, so the usual helpers (logins, raw requests, signaling clients) drive it; every
 * answer is checked against the contract as the test app does.
 */
import type { AddressInfo } from 'node:net';
import createClient, { type Middleware } from 'openapi-fetch';

import type { paths } from '../../generated/openapi.js';
import { openapiDocument } from '../../generated/openapi-document.js';
import type { Config } from '../../src/config/schema.js';
import { buildRoutes } from '../../src/http/app.js';
import { createLogger } from '../../src/logger.js';
import { createConvene } from '../../src/server.js';
import { checkResponse, operationFor } from './contract.js';
import { startTestApp, type TestApp } from './test-app.js';

export interface LoggedApp extends TestApp {
  /** Everything logged so far: one JSON line per entry. */
  log(): string;
}

const routes = buildRoutes(openapiDocument).table;

const contractCheck: Middleware = {
  async onResponse({ request, response, schemaPath }) {
    const body = await response.clone().text();
    checkResponse(operationFor(request.method, schemaPath), { status: response.status, contentType: response.headers.get('content-type'), body });
    return response;
  },
};

export async function startLoggedApp(overrides: Parameters<typeof startTestApp>[0] = {}): Promise<LoggedApp> {
  const base = await startTestApp(overrides);
  const lines: string[] = [];
  const logger = createLogger('trace', { write: (line: string) => void lines.push(line) });
  const config: Config = { ...base.config, logging: { ...base.config.logging, level: 'trace' } };
  const convene = await createConvene(config, { database: base.convene.database, logger });
  const address: AddressInfo = await convene.listen(0, '127.0.0.1');
  const url = `http://127.0.0.1:${address.port}`;

  const app: LoggedApp = {
    ...base,
    url,
    config,
    convene,
    log: () => lines.join(''),
    api(token) {
      const client = createClient<paths>({ baseUrl: `${url}/v1`, headers: token ? { authorization: `Bearer ${token}` } : {} });
      client.use(contractCheck);
      return client;
    },
    async request(method, path, init = {}) {
      const response = await fetch(`${url}${path}`, { method, headers: init.headers, body: init.body });
      const text = await response.text();
      const operationId = routes.match(method, path.split('?')[0]!).route?.operationId;
      if (operationId) checkResponse(operationId, { status: response.status, contentType: response.headers.get('content-type'), body: text });
      return Object.assign(response, { text_: text });
    },
    async login(name, claims = {}) {
      const email = `${name}@example.test`;
      const subject = { sub: `sub-${name}`, email, given_name: name, family_name: 'Tester', ...claims };
      const idToken = await base.issuer.idToken(subject);
      const accessToken = await base.issuer.accessToken({ sub: subject.sub });
      const login = await app.api().POST('/auth/login', { body: { id_token: idToken } });
      if (login.response.status !== 200) throw new Error(`login of ${name} failed: ${login.response.status}`);
      const me = await app.api(accessToken).GET('/users/me');
      return { id: me.data!.id, name, email, accessToken, idToken };
    },
    async close() {
      await convene.close();
      await base.close();
    },
  };
  return app;
}
