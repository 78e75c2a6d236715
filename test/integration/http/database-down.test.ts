/**
 * A database that does not answer: the service still answers, with 503 and the error body, and
 * `/health` and `/ready` say so — nothing hangs and nothing becomes a 500 — and the metrics count
 * the failed connections.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import { openDatabase, type Database } from '../../../src/db/connect.js';
import { createConvene, type Convene } from '../../../src/server.js';
import { checkResponse } from '../../support/contract.js';
import { startTestIssuer, type TestIssuer } from '../../support/oidc-issuer.js';

let issuer: TestIssuer;
let database: Database;
let convene: Convene;
let url: string;

beforeAll(async () => {
  issuer = await startTestIssuer({ clientId: 'convene' });
  // port 1 on loopback: nothing listens there, so every connection is refused at once
  const config = loadConfig({
    file: false,
    env: {},
    overrides: {
      database: { url: 'postgres://postgres@127.0.0.1:1/convene' },
      oidc: { issuer: issuer.issuer, client_id: 'convene' },
      dev: { identity_provider: false },
    },
  });
  database = await openDatabase(config.database);
  convene = await createConvene(config, { database, logger: pino({ level: 'silent' }) });
  const address = await convene.listen(0, '127.0.0.1');
  url = `http://127.0.0.1:${address.port}`;
});
afterAll(async () => {
  await convene?.close();
  await database?.close();
  await issuer?.close();
});

async function call(operationId: 'get_health' | 'get_ready' | 'get_me' | 'login', path: string, init: RequestInit = {}) {
  const res = await fetch(`${url}${path}`, init);
  const body = await res.text();
  checkResponse(operationId, { status: res.status, contentType: res.headers.get('content-type'), body });
  return { status: res.status, body: JSON.parse(body) };
}

describe('with the database down', () => {
  it('/health answers 503', async () => {
    expect(await call('get_health', '/health')).toEqual({ status: 503, body: { status: 'unavailable', database: 'down' } });
  });

  it('/ready answers 503 with the error body naming the database', async () => {
    expect(await call('get_ready', '/ready')).toEqual({
      status: 503,
      body: {
        code: 'service_unavailable',
        message: 'Not ready: database not answering',
        documentation_url: '/docs#error-service_unavailable',
        status: '503',
        errors: [{ field: 'database', code: 'unavailable', message: 'the database failed' }],
      },
    });
  });

  it('/metrics counts each connection the database refused', async () => {
    const errorsNow = async () => {
      const text = await (await fetch(`${url}/metrics`)).text();
      return Number(/^convene_database_errors_total (\S+)$/m.exec(text)?.[1]);
    };
    const before = await errorsNow();
    for (let i = 0; i < 3; i++) await call('get_health', '/health');
    // and the scrapes' own reads of the outbox, which fail as well
    expect(await errorsNow()).toBeGreaterThanOrEqual(before + 3);
  });

  it('an authenticated operation answers 503 service_unavailable', async () => {
    const token = await issuer.accessToken({ sub: 'someone' });
    const res = await call('get_me', '/v1/users/me', { headers: { authorization: `Bearer ${token}` } });
    expect(res).toMatchObject({ status: 503, body: { code: 'service_unavailable', status: '503' } });
  });

  it('login answers 503 after verifying the token, and stores nothing', async () => {
    const idToken = await issuer.idToken({ sub: 'someone', email: 'someone@example.test' });
    const res = await call('login', '/v1/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id_token: idToken }),
    });
    expect(res).toMatchObject({ status: 503, body: { code: 'service_unavailable' } });
  });
});
