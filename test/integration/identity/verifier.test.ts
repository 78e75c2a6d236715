import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createIdentity } from '../../../src/domain/identity/identity.js';
import type { Identity } from '../../../src/domain/identity/identity.js';
import { startTestIssuer } from '../../support/oidc-issuer.js';
import type { TestIssuer } from '../../support/oidc-issuer.js';
import { rejection } from '../../support/users.js';

let issuer: TestIssuer;
let identity: Identity;

beforeAll(async () => {
  issuer = await startTestIssuer();
  identity = await createIdentity(issuer.identityConfig({ audience: undefined }), {});
});
afterAll(async () => {
  await identity.close();
  await issuer.close();
});

describe('ID tokens', () => {
  it('maps a valid token to identity claims', async () => {
    const token = await issuer.idToken({
      sub: 'abc', email: 'ada@example.test', nickname: 'Countess', picture: 'https://img.example/ada.png',
      tariff_status: 'paid',
    });
    const claims = await identity.verifyIdToken(token);
    expect(claims).toMatchObject({
      issuer: issuer.issuer, subject: 'abc', email: 'ada@example.test', firstname: 'Ada', lastname: 'Lovelace',
      display_name: 'Countess', avatar_url: 'https://img.example/ada.png', tariff_status: 'paid',
    });
    expect(claims.expires_at.getTime()).toBeGreaterThan(Date.now());
    expect(claims.tariff).toBeUndefined();
  });

  it('accepts ES256 and falls back to name for the display name', async () => {
    const claims = await identity.verifyIdToken(await issuer.idToken({ name: 'Ada L.' }, { alg: 'ES256' }));
    expect(claims.display_name).toBe('Ada L.');
  });

  it('reads the tariff from the configured claim', async () => {
    const withTariff = await createIdentity({ ...issuer.identityConfig(), tariffs: { claim: 'ext.tariff' } });
    const claims = await withTariff.verifyIdToken(await issuer.idToken({ ext: { tariff: 'pro' } }));
    expect(claims.tariff).toBe('pro');
  });

  const failures: [string, () => Promise<string>, RegExp][] = [
    ['expired', () => issuer.bad.expired(), /expired/],
    ['wrong issuer', () => issuer.bad.wrongIssuer(), /another issuer/],
    ['wrong audience', () => issuer.bad.wrongAudience(), /another audience/],
    ['an access token (audience account)', () => issuer.accessToken(), /another audience/],
    ['bad signature', () => issuer.bad.foreignKey(), /signature/],
    ['bad ES256 signature', () => issuer.idToken({}, { alg: 'ES256', foreignKey: true }), /signature/],
    ['unknown kid', () => issuer.bad.unknownKid(), /kid/],
    ['alg none', () => issuer.bad.algNone(), /algorithm|malformed/],
    ['HS256 keyed with the public key', () => issuer.bad.hmacWithPublicKey(), /algorithm/],
    ['malformed', async () => issuer.bad.malformed(), /malformed/],
    ['empty', async () => '', /malformed/],
    ['missing sub', () => issuer.idToken({ sub: undefined }), /"sub"/],
    ['missing email', () => issuer.idToken({ email: undefined }), /"email"/],
    ['several audiences, azp another client', () => issuer.idToken({ azp: 'other' }, { audience: ['convene', 'other'] }), /azp/],
  ];
  it.each(failures)('rejects %s with 400 invalid_id_token', async (_name, mint, why) => {
    const error = await rejection(identity.verifyIdToken(await mint()));
    expect(error.status).toBe(400);
    expect(error.code).toBe('invalid_id_token');
    expect(error.message).toMatch(why);
  });
});

describe('access tokens', () => {
  it('grants a valid token', async () => {
    const grant = await identity.verifyAccessToken(await issuer.accessToken({ sub: 'u-9' }));
    expect(grant).toMatchObject({ issuer: issuer.issuer, subject: 'u-9' });
  });

  const failures: [string, () => Promise<string>, string][] = [
    ['expired', () => issuer.bad.expired('access'), 'The provided access token expired'],
    ['wrong issuer', () => issuer.bad.wrongIssuer('access'), 'The provided access token is invalid'],
    ['foreign key', () => issuer.bad.foreignKey('access'), 'The provided access token is invalid'],
    ['alg none', () => issuer.bad.algNone('access'), 'The provided access token is invalid'],
    ['malformed', async () => issuer.bad.malformed(), 'The provided access token is invalid'],
  ];
  it.each(failures)('rejects %s with 401 and WWW-Authenticate', async (_name, mint, description) => {
    const error = await rejection(identity.verifyAccessToken(await mint()));
    expect(error.status).toBe(401);
    expect(error.code).toBe('unauthorized');
    expect(error.headers?.['www-authenticate']).toBe(`Bearer error="invalid_token", error_description="${description}"`);
  });

  it('checks the audience only when one is configured', async () => {
    const strict = await createIdentity(issuer.identityConfig({ audience: 'convene-api' }));
    await expect(strict.verifyAccessToken(await issuer.accessToken())).rejects.toMatchObject({ status: 401 });
    const grant = await strict.verifyAccessToken(await issuer.accessToken({}, { audience: ['account', 'convene-api'] }));
    expect(grant.subject).toBe('user-1');
  });
});

describe('service tokens', () => {
  it('accepts a token carrying the role and lists its roles', async () => {
    const result = await identity.verifyServiceToken(await issuer.serviceToken(['call-in', 'other']), 'call-in');
    expect(result).toEqual({ subject: 'service-account-gateway', roles: ['call-in', 'other'] });
  });

  it('refuses a token without the role with 401', async () => {
    const error = await rejection(identity.verifyServiceToken(await issuer.serviceToken(['recorder']), 'call-in'));
    expect(error.status).toBe(401);
    expect(error.message).toMatch(/call-in/);
    expect(error.headers?.['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
  });

  it('refuses a user token (no roles) and a bad token with 401', async () => {
    await expect(identity.verifyServiceToken(await issuer.accessToken(), 'call-in')).rejects.toMatchObject({ status: 401 });
    await expect(identity.verifyServiceToken(await issuer.bad.foreignKey('access'), 'call-in')).rejects.toMatchObject({ status: 401 });
  });

  it('reads roles at a configured claim path', async () => {
    const custom = await createIdentity(issuer.identityConfig({ service_roles_claim: 'resource_access.convene.roles' }));
    const token = await issuer.accessToken({ resource_access: { convene: { roles: ['call-in'] } } });
    await expect(custom.verifyServiceToken(token, 'call-in')).resolves.toMatchObject({ roles: ['call-in'] });
    await expect(custom.verifyServiceToken(await issuer.serviceToken(['call-in']), 'call-in')).rejects.toMatchObject({ status: 401 });
  });
});

describe('provider info', () => {
  it('names the provider and its issuer URL', () => {
    expect(identity.providerInfo()).toEqual({ name: 'Test IdP', url: issuer.issuer });
  });
});
