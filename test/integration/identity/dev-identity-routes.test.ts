import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createDevIdentityProvider } from '../../../src/domain/identity/dev-provider.js';
import type { DevIdentityProvider } from '../../../src/domain/identity/dev-provider.js';
import { createIdentity } from '../../../src/domain/identity/identity.js';
import { devIdentityRouter } from '../../../src/http/dev-identity-routes.js';

let server: Server;
let provider: DevIdentityProvider;
let issuer: string;

beforeAll(async () => {
  const app = express();
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}/dev-idp`;
  provider = await createDevIdentityProvider({ issuer });
  app.use('/dev-idp', devIdentityRouter(provider));
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

describe('development IdP routes', () => {
  it('serve discovery and the JWKS', async () => {
    const discovery = await fetch(`${issuer}/.well-known/openid-configuration`);
    expect(discovery.status).toBe(200);
    expect(await discovery.json()).toMatchObject({ issuer, jwks_uri: `${issuer}/jwks` });
    const jwks = await fetch(`${issuer}/jwks`);
    expect(jwks.headers.get('content-type')).toMatch(/^application\/jwk-set\+json/);
    expect(await jwks.json()).toEqual(provider.jwks());
  });

  it('let a standard OIDC verifier (discovery + remote JWKS) accept the development tokens', async () => {
    const identity = await createIdentity({
      http: { port: 0 },
      database: { data_dir: './data', in_memory: true },
      dev: { identity_provider: false },
      tariffs: {},
      oidc: { issuer, client_id: 'convene', service_roles_claim: 'realm_access.roles', call_in_role: 'call-in', provider_name: 'Dev' },
    });
    const tokens = await provider.issueTokens({ subject: 'dev-dora', email: 'dora@example.test', given_name: 'Dora' });
    await expect(identity.verifyIdToken(tokens.id_token)).resolves.toMatchObject({ subject: 'dev-dora', firstname: 'Dora' });
    await expect(identity.verifyAccessToken(tokens.access_token)).resolves.toMatchObject({ subject: 'dev-dora' });
  });
});
