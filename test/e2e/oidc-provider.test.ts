/**
 * End to end against a real OpenID provider: the `oidc-provider` package on port 0 with its
 * development interactions. The test drives the authorization-code flow with PKCE headlessly
 * (redirects followed by hand, a small cookie jar), takes the id_token from the token endpoint and
 * verifies it with `createIdentity` configured with the provider as issuer (discovery + JWKS).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createIdentity } from '../../src/domain/identity/identity.js';
import { startTestApp } from '../support/test-app.js';
import type { IdentityConfig } from '../../src/domain/identity/identity-config.js';
import { asHttp } from '../support/http-errors.js';

// oidc-provider ships no type declarations; describe the little this test uses. The specifier is not a
// literal so the type checker does not look for declarations.
interface OidcProvider {
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
}
type ProviderConstructor = new (issuer: string, configuration: Record<string, unknown>) => OidcProvider;
const oidcProviderPackage: string = 'oidc-provider';

const REDIRECT_URI = 'http://127.0.0.1:9/callback';
const OTHER_CLIENT = 'other-app';
const server = createServer();
let issuer: string;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { default: Provider } = (await import(oidcProviderPackage)) as { default: ProviderConstructor };
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const provider = new Provider(issuer, {
    // Convene's web app, and another application of the same provider (its own API's audience)
    clients: ['convene', OTHER_CLIENT].map((client_id) => ({
      client_id,
      token_endpoint_auth_method: 'none',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code'],
      response_types: ['code'],
    })),
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'e2e-rs', alg: 'RS256', use: 'sig' }] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    pkce: { required: () => true },
    ttl: { AuthorizationCode: 60, AccessToken: 600, IdToken: 600, Interaction: 600, Session: 3600, Grant: 3600 },
    features: {
      devInteractions: { enabled: true },
      // JWT access tokens for Convene's API (opaque ones are the default), as Keycloak issues them
      resourceIndicators: {
        enabled: true,
        defaultResource: () => 'https://convene.test/v1',
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, _resource: string, client: { clientId: string }) => ({
          scope: 'api',
          audience: client.clientId === 'convene' ? 'convene' : 'other-api',
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    // Scope claims go into the ID token too (toolchain gotcha 27); login needs the email there.
    conformIdTokenClaims: false,
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['given_name', 'family_name', 'name'] },
    findAccount: async (_ctx: unknown, sub: string) => ({
      accountId: sub,
      claims: async () => ({ sub, email: `${sub}@example.test`, email_verified: true, given_name: 'Eve', family_name: 'Provider' }),
    }),
  });
  server.on('request', provider.callback());
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Just enough of a browser: one cookie jar, redirects followed by the caller. */
function browser() {
  const jar = new Map<string, string>();
  return async (url: string, init: RequestInit = {}): Promise<Response> => {
    const response = await fetch(new URL(url, issuer), {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = cookie.split(';');
      const separator = pair.indexOf('=');
      const name = pair.slice(0, separator).trim();
      const value = pair.slice(separator + 1).trim();
      const expired = attributes.some((a) => /^\s*expires=/i.test(a) && Date.parse(a.split('=')[1] ?? '') < Date.now());
      if (expired || value === '') jar.delete(name);
      else jar.set(name, value);
    }
    return response;
  };
}

/** Authorization code + PKCE through the provider's dev login and consent pages; returns the token response. */
async function signIn(login: string, clientId = 'convene'): Promise<{ id_token: string; access_token: string }> {
  const go = browser();
  const verifier = randomBytes(32).toString('base64url');
  const authorize = new URL('/auth', issuer);
  authorize.search = new URLSearchParams({
    client_id: clientId,
    response_type: 'code',
    scope: 'openid email profile api',
    redirect_uri: REDIRECT_URI,
    state: 'st4te',
    nonce: 'n0nce',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();

  let location = authorize.href;
  for (let hop = 0; hop < 12 && !location.startsWith(REDIRECT_URI); hop++) {
    let response: Response;
    if (/\/interaction\/[^/]+$/.test(new URL(location, issuer).pathname)) {
      const page = await (await go(location)).text();
      const prompt = /name="prompt" value="(\w+)"/.exec(page)?.[1];
      const form: Record<string, string> = prompt === 'login' ? { prompt, login, password: 'any' } : { prompt: String(prompt) };
      response = await go(location, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form).toString(),
      });
    } else {
      response = await go(location);
    }
    expect(response.status, `hop ${hop} to ${location}`).toBeGreaterThanOrEqual(300);
    location = new URL(response.headers.get('location') ?? '', issuer).href;
  }
  const callback = new URL(location);
  expect(callback.searchParams.get('state')).toBe('st4te');
  const code = callback.searchParams.get('code');
  expect(code).toBeTruthy();

  const token = await go('/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: code!,
      redirect_uri: REDIRECT_URI,
      code_verifier: verifier,
      client_id: clientId,
    }).toString(),
  });
  expect(token.status).toBe(200);
  return (await token.json()) as { id_token: string; access_token: string };
}

const configFor = (oidcIssuer: string): IdentityConfig => ({
  http: { port: 0 },
  database: { data_dir: './data', in_memory: true },
  oidc: { issuer: oidcIssuer, client_id: 'convene', service_roles_claim: 'realm_access.roles', call_in_role: 'call-in', provider_name: 'oidc-provider' },
  dev: { identity_provider: false },
  tariffs: {},
});

describe('a real OpenID provider (oidc-provider)', () => {
  it('issues an ID token through code + PKCE that createIdentity verifies', async () => {
    const tokens = await signIn('eve');
    const identity = await createIdentity(configFor(issuer));
    const claims = await identity.verifyIdToken(tokens.id_token);
    expect(claims).toMatchObject({ issuer, subject: 'eve', email: 'eve@example.test', firstname: 'Eve', lastname: 'Provider' });
    expect(claims.expires_at.getTime()).toBeGreaterThan(Date.now());
  });

  it('refuses the same ID token for another client id', async () => {
    const tokens = await signIn('mallory');
    const identity = await createIdentity({ ...configFor(issuer), oidc: { ...configFor(issuer).oidc, client_id: 'someone-else' } });
    await expect(asHttp(identity.verifyIdToken(tokens.id_token))).rejects.toMatchObject({ status: 400, code: 'invalid_id_token' });
  });
});

describe('Convene with a real OpenID provider as its issuer', () => {
  it('logs a user in from the provider’s ID token and serves them with its access token', async () => {
    const app = await startTestApp({ oidc: { issuer, client_id: 'convene', provider_name: 'e2e' } });
    try {
      const tokens = await signIn('frank');
      const provider = await app.api().GET('/auth/login');
      expect(provider.data).toEqual({ oidc: { name: 'e2e', url: issuer } });

      const login = await app.api().POST('/auth/login', { body: { id_token: tokens.id_token } });
      expect(login.response.status).toBe(200);
      expect(login.data).toEqual({ permissions: [] });

      const me = await app.api(tokens.access_token).GET('/users/me');
      expect(me.response.status).toBe(200);
      expect(me.data).toMatchObject({ email: 'frank@example.test', firstname: 'Eve', lastname: 'Provider' });
    } finally {
      await app.close();
    }
  });
});

describe("tokens of the real provider that are not Convene's access tokens (issue 22)", () => {
  it("refuses the provider's ID token and another client's access token as access tokens with 401", async () => {
    const app = await startTestApp({ oidc: { issuer, client_id: 'convene', provider_name: 'e2e' } });
    try {
      const own = await signIn('grace');
      expect((await app.api().POST('/auth/login', { body: { id_token: own.id_token } })).response.status).toBe(200);
      expect((await app.api(own.access_token).GET('/users/me')).response.status).toBe(200);

      const asIdToken = await app.api(own.id_token).GET('/users/me');
      expect(asIdToken.response.status).toBe(401);
      expect(asIdToken.error).toMatchObject({ code: 'unauthorized' });

      const other = await signIn('grace', OTHER_CLIENT); // the same person, through another application
      const asOtherClient = await app.api(other.access_token).GET('/users/me');
      expect(asOtherClient.response.status).toBe(401);
      expect(asOtherClient.error).toMatchObject({ code: 'unauthorized' });
    } finally {
      await app.close();
    }
  });
});
