import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { devUser, mintDevTokens } from '../../../src/domain/identity/dev-token.js';
import type { IdentityConfig } from '../../../src/domain/identity/identity-config.js';
import { createIdentity } from '../../../src/domain/identity/identity.js';

let dir: string;
let config: IdentityConfig;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'convene-dev-token-'));
  config = {
    http: { port: 11311 },
    database: { data_dir: dir, in_memory: false },
    oidc: { client_id: 'convene', service_roles_claim: 'realm_access.roles', call_in_role: 'call-in', provider_name: 'Dev' },
    dev: { identity_provider: true },
    tariffs: {},
  };
});
afterEach(async () => {
  vi.unstubAllEnvs();
  await rm(dir, { recursive: true, force: true });
});

describe('dev-token', () => {
  it('derives a user from a name', () => {
    expect(devUser('alice.smith')).toEqual({
      subject: 'dev-alice.smith',
      email: 'alice.smith@example.test',
      given_name: 'Alice',
      family_name: 'Smith',
      name: 'Alice Smith',
    });
    expect(devUser('bob')).toMatchObject({ given_name: 'Bob', family_name: 'Example' });
  });

  it('mints user tokens that the service (same configuration) accepts', async () => {
    const output = await mintDevTokens(config, { name: 'alice' });
    const identity = await createIdentity(config); // builds its provider from the same key file
    await expect(identity.verifyIdToken(output.id_token!)).resolves.toMatchObject({
      subject: 'dev-alice',
      email: 'alice@example.test',
      firstname: 'Alice',
      lastname: 'Example',
    });
    await expect(identity.verifyAccessToken(output.access_token)).resolves.toMatchObject({ subject: 'dev-alice' });
    expect(output.issuer).toBe('http://localhost:11311/dev-idp');
  });

  it('mints a call-in service token', async () => {
    const output = await mintDevTokens(config, { name: 'gateway', service: true, lifetimeSeconds: 120 });
    expect(output.id_token).toBeUndefined();
    const identity = await createIdentity(config);
    await expect(identity.verifyServiceToken(output.access_token, 'call-in')).resolves.toEqual({
      subject: 'service-account-gateway',
      roles: ['call-in'],
    });
    expect(Date.parse(output.expires_at) - Date.now()).toBeLessThanOrEqual(120_000);
  });

  it('refuses in production, with an issuer, with the provider off, with an in-memory key, and bad input', async () => {
    await expect(mintDevTokens({ ...config, oidc: { ...config.oidc, issuer: 'https://idp.example' } }, { name: 'a' })).rejects.toThrow(/issuer is configured/);
    await expect(mintDevTokens({ ...config, dev: { identity_provider: false } }, { name: 'a' })).rejects.toThrow(/is off/);
    await expect(mintDevTokens({ ...config, database: { data_dir: dir, in_memory: true } }, { name: 'a' })).rejects.toThrow(/in memory/);
    await expect(mintDevTokens(config, { name: '../etc' })).rejects.toThrow(/name/);
    await expect(mintDevTokens(config, { name: 'a', lifetimeSeconds: 0 })).rejects.toThrow(/lifetime/);
    await expect(mintDevTokens(config, { name: 'a', lifetimeSeconds: Number('x') })).rejects.toThrow(/lifetime/);
    vi.stubEnv('NODE_ENV', 'production');
    await expect(mintDevTokens(config, { name: 'a' })).rejects.toThrow(/NODE_ENV=production/);
  });
});
