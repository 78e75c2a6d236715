import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterEach, describe, expect, it } from 'vitest';

import { createIdentity } from '../../../src/domain/identity/identity.js';
import { CLOCK_TOLERANCE_SECONDS } from '../../../src/domain/identity/token-verification.js';
import { startTestIssuer } from '../../support/oidc-issuer.js';
import type { TestIssuer } from '../../support/oidc-issuer.js';
import { DomainError } from '../../../src/errors.js';
import { httpError } from '../../../src/http/errors.js';
import { asHttp } from '../../support/http-errors.js';

const issuers: TestIssuer[] = [];
async function issuerForTest(options?: { port?: number }): Promise<TestIssuer> {
  const issuer = await startTestIssuer(options);
  issuers.push(issuer);
  return issuer;
}
afterEach(async () => {
  await Promise.all(issuers.splice(0).map((issuer) => issuer.close()));
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('key and token caching', () => {
  it('fetches discovery and the JWKS once for many verifications', async () => {
    const issuer = await issuerForTest();
    const identity = await createIdentity(issuer.identityConfig());
    expect(issuer.requests).toEqual({ discovery: 0, jwks: 0 }); // nothing fetched before the first token
    await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        await identity.verifyIdToken(await issuer.idToken({ sub: `user-${i}` }));
        await identity.verifyAccessToken(await issuer.accessToken({ sub: `user-${i}` }, { alg: i % 2 ? 'ES256' : 'RS256' }));
      }),
    );
    expect(issuer.requests).toEqual({ discovery: 1, jwks: 1 });
  });

  it('serves a known access token from the cache until its exp, then verifies it again', async () => {
    const issuer = await issuerForTest();
    let clock = Date.now();
    // With a JWKS cache age of 0, every real verification refetches the JWKS: the count shows which calls verified.
    const identity = await createIdentity(issuer.identityConfig(), { jwksCacheMaxAgeMs: 0, now: () => clock });
    const token = await issuer.accessToken({ sub: 'cached' }, { expiresIn: 120 });

    const first = await identity.verifyAccessToken(token);
    expect(issuer.requests.jwks).toBe(1);
    for (let i = 0; i < 20; i++) expect(await identity.verifyAccessToken(token)).toEqual(first);
    await identity.verifyServiceToken(token, 'call-in').catch(() => undefined); // same cache entry, no fetch
    expect(issuer.requests.jwks).toBe(1);

    await identity.verifyAccessToken(await issuer.accessToken({ sub: 'other' }));
    expect(issuer.requests.jwks).toBe(2); // an unknown token does verify

    clock = first.expires_at.getTime() + (CLOCK_TOLERANCE_SECONDS + 1) * 1000;
    await expect(asHttp(identity.verifyAccessToken(token))).rejects.toMatchObject({
      status: 401,
      headers: { 'www-authenticate': 'Bearer error="invalid_token", error_description="The provided access token expired"' },
    });
    expect(issuer.requests.jwks).toBe(3);
  });

  it('does not cache rejected tokens', async () => {
    const issuer = await issuerForTest();
    const identity = await createIdentity(issuer.identityConfig(), { jwksCacheMaxAgeMs: 0 });
    const bad = await issuer.bad.foreignKey('access');
    await expect(asHttp(identity.verifyAccessToken(bad))).rejects.toMatchObject({ status: 401 });
    await expect(asHttp(identity.verifyAccessToken(bad))).rejects.toMatchObject({ status: 401 });
    expect(issuer.requests.jwks).toBe(2);
  });
});

describe('discovery while the identity provider is down', () => {
  it('starts without the IdP, answers 503, and retries discovery once it is back', async () => {
    const issuer = await issuerForTest();
    issuer.available = false;
    const identity = await createIdentity(issuer.identityConfig(), { discoveryRetryAfterMs: 0 });
    const token = await issuer.idToken();
    await expect(asHttp(identity.verifyIdToken(token))).rejects.toMatchObject({ status: 503, code: 'identity_provider_unavailable' });
    await expect(asHttp(identity.verifyAccessToken(await issuer.accessToken()))).rejects.toMatchObject({ status: 503 });
    issuer.available = true;
    await expect(identity.verifyIdToken(token)).resolves.toMatchObject({ subject: 'user-1' });
    expect(issuer.requests.discovery).toBe(3);
  });

  it('waits out the retry interval before asking a failed IdP again', async () => {
    const issuer = await issuerForTest();
    issuer.available = false;
    let clock = Date.now();
    const identity = await createIdentity(issuer.identityConfig(), { discoveryRetryAfterMs: 5_000, now: () => clock });
    const token = await issuer.idToken();
    await expect(asHttp(identity.verifyIdToken(token))).rejects.toMatchObject({ status: 503 });
    issuer.available = true;
    await expect(asHttp(identity.verifyIdToken(token))).rejects.toMatchObject({ status: 503 });
    expect(issuer.requests.discovery).toBe(1);
    clock += 5_000;
    await expect(identity.verifyIdToken(token)).resolves.toMatchObject({ subject: 'user-1' });
    expect(issuer.requests.discovery).toBe(2);
  });

  it('recovers when nothing listened at the issuer URL at first', async () => {
    const port = await freePort();
    const config = {
      http: { port: 0 },
      database: { data_dir: './data', in_memory: true },
      dev: { identity_provider: false },
      tariffs: {},
      oidc: {
        issuer: `http://127.0.0.1:${port}/realms/test`,
        client_id: 'convene',
        service_roles_claim: 'realm_access.roles',
        call_in_role: 'call-in',
        provider_name: 'x',
      },
    };
    const identity = await createIdentity(config, { discoveryRetryAfterMs: 0 });
    await expect(asHttp(identity.verifyAccessToken('a.b.c'))).rejects.toMatchObject({ status: 503 });
    const issuer = await issuerForTest({ port });
    await expect(identity.verifyAccessToken(await issuer.accessToken())).resolves.toMatchObject({ subject: 'user-1' });
  });

  it('answers 503 when the JWKS cannot be fetched', async () => {
    const issuer = await issuerForTest();
    const identity = await createIdentity(issuer.identityConfig(), { jwksCacheMaxAgeMs: 0 });
    await identity.verifyAccessToken(await issuer.accessToken());
    issuer.available = false;
    await expect(asHttp(identity.verifyAccessToken(await issuer.accessToken({ sub: 'new' })))).rejects.toMatchObject({
      status: 503,
      code: 'identity_provider_unavailable',
    });
  });

  it('refuses a discovery document naming another issuer (a misconfigured URL)', async () => {
    const issuer = await issuerForTest();
    const identity = await createIdentity(issuer.identityConfig({ issuer: `${issuer.issuer}/` }));
    const error = await identity.verifyIdToken(await issuer.idToken()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DomainError);
    expect(httpError(error as DomainError)).toMatchObject({ status: 503 });
    expect(String((error as Error).cause)).toMatch(/names the issuer/);
  });
});
