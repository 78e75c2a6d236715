import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { createDevIdentityProvider, devIssuerUrl, devKeyFile, devProviderFromConfig } from '../../../src/domain/identity/dev-provider.js';
import type { IdentityConfig } from '../../../src/domain/identity/identity-config.js';
import { IdentityConfigurationError, createIdentity, identityMode } from '../../../src/domain/identity/identity.js';
import { asHttp } from '../../support/http-errors.js';

const ISSUER = 'http://localhost:11311/dev-idp';

function devConfig(dataDir: string, overrides: Partial<IdentityConfig['oidc']> = {}): IdentityConfig {
  return {
    http: { port: 11311 },
    database: { data_dir: dataDir, in_memory: false },
    oidc: { client_id: 'convene', service_roles_claim: 'realm_access.roles', call_in_role: 'call-in', provider_name: 'Dev', ...overrides },
    dev: { identity_provider: true },
    tariffs: {},
  };
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'convene-dev-idp-'));
});
afterEach(async () => {
  vi.unstubAllEnvs();
  await rm(dir, { recursive: true, force: true });
});

describe('development identity provider', () => {
  it('issues tokens that the identity layer verifies, without any network', async () => {
    const provider = await createDevIdentityProvider({ issuer: ISSUER });
    const identity = await createIdentity(devConfig(dir), { devProvider: provider });
    const tokens = await provider.issueTokens({
      subject: 'dev-alice',
      email: 'alice@example.test',
      given_name: 'Alice',
      family_name: 'Example',
      name: 'Alice Example',
      roles: ['call-in'],
    });
    expect(await identity.verifyIdToken(tokens.id_token)).toMatchObject({
      issuer: ISSUER,
      subject: 'dev-alice',
      email: 'alice@example.test',
      firstname: 'Alice',
      lastname: 'Example',
      display_name: 'Alice Example',
    });
    expect(await identity.verifyAccessToken(tokens.access_token)).toMatchObject({ subject: 'dev-alice', expires_at: tokens.expires_at });
    await expect(identity.verifyServiceToken(tokens.access_token, 'call-in')).resolves.toMatchObject({ roles: ['call-in'] });
    expect(identity.providerInfo()).toEqual({ name: 'Dev', url: ISSUER });

    expect(decodeProtectedHeader(tokens.id_token)).toMatchObject({ alg: 'ES256', kid: provider.jwks().keys[0]!.kid });
    expect(decodeJwt(tokens.id_token).aud).toBe('convene');
    expect(decodeJwt(tokens.access_token)).toMatchObject({ aud: 'convene', azp: 'convene', realm_access: { roles: ['call-in'] } });
    // RFC 9068: the access token says what it is, so its ID token can never stand in for it
    expect(decodeProtectedHeader(tokens.access_token).typ).toBe('at+jwt');
    await expect(asHttp(identity.verifyAccessToken(tokens.id_token))).rejects.toMatchObject({ status: 401 });
    await expect(asHttp(identity.verifyIdToken(tokens.access_token))).rejects.toMatchObject({ status: 400 });
  });

  it('honours the lifetime, the audience and the roles claim path', async () => {
    const provider = await createDevIdentityProvider({ issuer: ISSUER, audience: 'convene-api', rolesClaim: 'resource_access.convene.roles' });
    const before = Date.now();
    const tokens = await provider.issueTokens({ subject: 's', roles: ['call-in'], lifetimeSeconds: 60 });
    expect(tokens.expires_at.getTime() - before).toBeLessThanOrEqual(61_000);
    expect(decodeJwt(tokens.access_token)).toMatchObject({ aud: 'convene-api', resource_access: { convene: { roles: ['call-in'] } } });
  });

  it('publishes only the public key', async () => {
    const provider = await createDevIdentityProvider({ issuer: ISSUER });
    const [key] = provider.jwks().keys;
    expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(key).not.toHaveProperty('d');
    expect(provider.discovery()).toMatchObject({ issuer: ISSUER, jwks_uri: `${ISSUER}/jwks` });
    expect(provider.discovery()).not.toHaveProperty('token_endpoint');
  });

  it('keeps its key in the key file (mode 0600) and reuses it when reopened', async () => {
    const keyFile = join(dir, 'nested', 'dev-idp-key.json');
    const first = await createDevIdentityProvider({ issuer: ISSUER, keyFile });
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    const second = await createDevIdentityProvider({ issuer: ISSUER, keyFile });
    expect(second.jwks()).toEqual(first.jwks());
    // A token of the first instance verifies against the second: the key survived the "restart".
    const identity = await createIdentity(devConfig(dir), { devProvider: second });
    const tokens = await first.issueTokens({ subject: 'bob', email: 'bob@example.test' });
    await expect(identity.verifyIdToken(tokens.id_token)).resolves.toMatchObject({ subject: 'bob' });
    expect(JSON.parse(await readFile(keyFile, 'utf8'))).toHaveProperty('d');
  });

  it('creates one key when several start at once', async () => {
    const keyFile = join(dir, 'dev-idp-key.json');
    const providers = await Promise.all(Array.from({ length: 5 }, () => createDevIdentityProvider({ issuer: ISSUER, keyFile })));
    expect(new Set(providers.map((provider) => provider.jwks().keys[0]!.kid)).size).toBe(1);
  });

  it('refuses a key file that is not a P-256 private JWK', async () => {
    const keyFile = join(dir, 'dev-idp-key.json');
    await writeFile(keyFile, '{"kty":"oct","k":"abc"}');
    await expect(createDevIdentityProvider({ issuer: ISSUER, keyFile })).rejects.toThrow(/not a P-256 private JWK/);
    await writeFile(keyFile, 'garbage');
    await expect(createDevIdentityProvider({ issuer: ISSUER, keyFile })).rejects.toThrow(/not JSON/);
  });

  it('derives its issuer URL and key file from the configuration', async () => {
    expect(devIssuerUrl({ http: { port: 8080 } })).toBe('http://localhost:8080/dev-idp');
    expect(devIssuerUrl({ http: { port: 8080, public_url: 'https://convene.example/' } })).toBe('https://convene.example/dev-idp');
    expect(devKeyFile({ database: { data_dir: '/srv/data', in_memory: false } })).toBe('/srv/data/dev-idp-key.json');
    expect(devKeyFile({ database: { data_dir: '/srv/data', in_memory: true } })).toBeUndefined();
    const provider = await devProviderFromConfig(devConfig(dir, { audiences: ['api', 'other'] }));
    expect(provider).toMatchObject({ issuer: ISSUER, clientId: 'convene', audience: 'api' });
    expect((await stat(join(dir, 'dev-idp-key.json'))).isFile()).toBe(true);
  });

  it('is built from the configuration by createIdentity when none is passed', async () => {
    const identity = await createIdentity(devConfig(dir));
    const provider = await devProviderFromConfig(devConfig(dir)); // same key file
    const tokens = await provider.issueTokens({ subject: 'carol', email: 'carol@example.test' });
    await expect(identity.verifyIdToken(tokens.id_token)).resolves.toMatchObject({ subject: 'carol' });
  });
});

describe('choosing the identity provider', () => {
  it('refuses the development provider with NODE_ENV=production', async () => {
    vi.stubEnv('NODE_ENV', 'production');
    await expect(createIdentity(devConfig(dir))).rejects.toThrow(IdentityConfigurationError);
    await expect(createIdentity(devConfig(dir))).rejects.toThrow(/NODE_ENV=production/);
    await expect(createDevIdentityProvider({ issuer: ISSUER })).rejects.toThrow(/NODE_ENV=production/);
  });

  it('selects the issuer when configured, else the development provider', () => {
    expect(identityMode(devConfig(dir))).toBe('dev');
    expect(identityMode(devConfig(dir, { issuer: 'https://idp.example' }))).toBe('issuer');
  });

  it('needs an issuer or the development provider', async () => {
    const config = { ...devConfig(dir), dev: { identity_provider: false } };
    expect(() => identityMode(config)).toThrow(IdentityConfigurationError);
    await expect(createIdentity(config)).rejects.toThrow(/set \[oidc\] issuer/);
  });

  it('uses the configured issuer in production, ignoring the development switch', async () => {
    vi.stubEnv('NODE_ENV', 'production');
    const identity = await createIdentity(devConfig(dir, { issuer: 'https://idp.example/realms/main' }));
    expect(identity.providerInfo().url).toBe('https://idp.example/realms/main');
  });
});
