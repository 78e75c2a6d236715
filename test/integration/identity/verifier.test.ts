import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createIdentity } from '../../../src/domain/identity/identity.js';
import type { Identity } from '../../../src/domain/identity/identity.js';
import { OTHER_CLIENT, startTestIssuer } from '../../support/oidc-issuer.js';
import type { TestIssuer } from '../../support/oidc-issuer.js';
import { rejection } from '../../support/users.js';
import { asHttp } from '../../support/http-errors.js';

let issuer: TestIssuer;
let identity: Identity;

beforeAll(async () => {
  issuer = await startTestIssuer();
  identity = await createIdentity(issuer.identityConfig(), {});
});
afterAll(async () => {
  await identity.close();
  await issuer.close();
});

describe('ID tokens', () => {
  it('maps a valid token to identity claims', async () => {
    const token = await issuer.idToken({
      sub: 'abc',
      email: 'ada@example.test',
      nickname: 'Countess',
      picture: 'https://img.example/ada.png',
      tariff_status: 'paid',
    });
    const claims = await identity.verifyIdToken(token);
    expect(claims).toMatchObject({
      issuer: issuer.issuer,
      subject: 'abc',
      email: 'ada@example.test',
      firstname: 'Ada',
      lastname: 'Lovelace',
      display_name: 'Countess',
      avatar_url: 'https://img.example/ada.png',
      tariff_status: 'paid',
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
    [
      'an access token addressed to the client (Keycloak typ Bearer)',
      () => issuer.accessToken({ email: 'a@example.test' }, { audience: 'convene' }),
      /access token/,
    ],
    ['an RFC 9068 access token addressed to the client', () => issuer.idToken({ typ: undefined }, { typ: 'at+jwt' }), /access token/],
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
});

/**
 * Finding 1 of issue 22: a token the issuer signed for another client of its realm, or an ID
 * token, must not open the API. By default an access token must name the login client
 * (`[oidc] client_id`) in `aud` or as its authorized party (`azp`, RFC 9068's `client_id`).
 */
describe('access tokens: meant for Convene, and access tokens at all', () => {
  const refuse = async (verifier: Identity, token: string, why: RegExp) => {
    const error = await rejection(verifier.verifyAccessToken(token));
    expect(error.status).toBe(401);
    expect(error.code).toBe('unauthorized');
    expect(error.message).toMatch(why);
    expect(error.headers?.['www-authenticate']).toBe('Bearer error="invalid_token", error_description="The provided access token is invalid"');
  };

  it('refuses a token issued to another client of the realm (aud and azp that client)', async () => {
    await refuse(identity, await issuer.bad.otherClient('access'), /issued to another client/);
  });

  it('refuses a token for the shared "account" audience whose azp is another client', async () => {
    await refuse(identity, await issuer.accessToken({ azp: OTHER_CLIENT }), /issued to another client/);
  });

  it('refuses a token that names no client at all', async () => {
    await refuse(identity, await issuer.accessToken({ azp: undefined }), /issued to another client/);
  });

  it('accepts the login client as azp, as aud, and as RFC 9068 client_id', async () => {
    await expect(identity.verifyAccessToken(await issuer.accessToken({ azp: 'convene' }))).resolves.toMatchObject({ subject: 'user-1' });
    const audienceOnly = await issuer.accessToken({ azp: undefined }, { audience: ['convene', 'account'] });
    await expect(identity.verifyAccessToken(audienceOnly)).resolves.toMatchObject({ subject: 'user-1' });
    const rfc9068 = await issuer.accessToken({ typ: undefined, azp: undefined, client_id: 'convene' }, { typ: 'at+jwt', audience: 'https://api.example' });
    await expect(identity.verifyAccessToken(rfc9068)).resolves.toMatchObject({ subject: 'user-1' });
  });

  it('refuses the login client\'s own ID token (Keycloak typ "ID"), though it is meant for the client', async () => {
    await refuse(identity, await issuer.idToken(), /ID token|not an access token/);
  });

  it("refuses an untyped token carrying an ID token's claims (nonce, at_hash, c_hash)", async () => {
    for (const claim of [{ nonce: 'n' }, { at_hash: 'x' }, { c_hash: 'y' }]) {
      await refuse(identity, await issuer.accessToken({ typ: undefined, ...claim }), /ID token/);
    }
  });

  it("refuses an untyped token without scope, scp or client_id (an ID token's shape)", async () => {
    await refuse(identity, await issuer.idToken({ typ: undefined }), /ID token/);
    await refuse(identity, await issuer.accessToken({ typ: undefined, scope: undefined }), /ID token/);
  });

  it('accepts an untyped token with scope, scp or client_id and no ID-token claim', async () => {
    for (const claims of [{ scope: 'openid' }, { scope: undefined, scp: ['api'] }, { scope: undefined, client_id: 'convene' }]) {
      const token = await issuer.accessToken({ typ: undefined, ...claims }, { typ: null });
      await expect(identity.verifyAccessToken(token)).resolves.toMatchObject({ subject: 'user-1' });
    }
  });

  it('refuses a Keycloak token of another type (Refresh, Logout) and a typ header of another kind', async () => {
    await refuse(identity, await issuer.accessToken({ typ: 'Refresh' }), /not an access token/);
    await refuse(identity, await issuer.accessToken({ typ: 'Logout' }), /not an access token/);
    await refuse(identity, await issuer.accessToken({}, { typ: 'logout+jwt' }), /not an access token/);
  });

  it('with authorized_parties = ["Frontend"]: the web app\'s Keycloak token (aud "account", azp "Frontend") and nothing else', async () => {
    const reference = await createIdentity(issuer.identityConfig({ client_id: 'Frontend', authorized_parties: ['Frontend'] }));
    const webApp = await issuer.accessToken({ azp: 'Frontend' });
    await expect(reference.verifyAccessToken(webApp)).resolves.toMatchObject({ subject: 'user-1' });
    await refuse(reference, await issuer.accessToken({ azp: 'convene' }), /issued to another client/);
    await refuse(reference, await issuer.bad.otherClient('access'), /issued to another client/);
    // the web app's ID token is issued to Frontend too (aud and azp), and still is no access token
    await refuse(reference, await issuer.idToken({ azp: 'Frontend' }, { audience: 'Frontend' }), /not an access token/);
  });

  it('with audiences configured (and no authorized_parties), only those audiences', async () => {
    const strict = await createIdentity(issuer.identityConfig({ audiences: ['convene-api'] }));
    await refuse(strict, await issuer.accessToken(), /issued to another client/);
    const grant = await strict.verifyAccessToken(await issuer.accessToken({ azp: OTHER_CLIENT }, { audience: ['account', 'convene-api'] }));
    expect(grant.subject).toBe('user-1');
  });

  it('checks tokens read from the cache by the same rules (a refused token is not remembered as good)', async () => {
    const token = await issuer.bad.otherClient('access');
    await refuse(identity, token, /issued to another client/);
    await refuse(identity, token, /issued to another client/);
  });
});

describe('service tokens', () => {
  let gateways: Identity;
  beforeAll(async () => {
    gateways = await createIdentity(issuer.identityConfig({ authorized_parties: ['convene', 'gateway'] }));
  });

  it('accepts a token carrying the role and lists its roles', async () => {
    const result = await gateways.verifyServiceToken(await issuer.serviceToken(['call-in', 'other']), 'call-in');
    expect(result).toEqual({ subject: 'service-account-gateway', roles: ['call-in', 'other'] });
  });

  it('refuses with 401 a gateway client that is not an authorized party, whatever its roles', async () => {
    const error = await rejection(identity.verifyServiceToken(await issuer.serviceToken(['call-in']), 'call-in'));
    expect(error.status).toBe(401);
    expect(error.message).toMatch(/issued to another client/);
  });

  it('refuses with 401 a token of another client carrying the role, and an ID token carrying it', async () => {
    const roles = { realm_access: { roles: ['call-in'] } };
    for (const token of [await issuer.bad.otherClient('access', roles), await issuer.idToken({ ...roles, azp: 'gateway' }, { audience: 'gateway' })]) {
      const error = await rejection(gateways.verifyServiceToken(token, 'call-in'));
      expect(error.status).toBe(401);
      expect(error.headers?.['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
    }
  });

  it('refuses a token without the role with 401', async () => {
    const error = await rejection(gateways.verifyServiceToken(await issuer.serviceToken(['recorder']), 'call-in'));
    expect(error.status).toBe(401);
    expect(error.message).toMatch(/call-in/);
    expect(error.headers?.['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
  });

  it('refuses a user token (no roles) and a bad token with 401', async () => {
    await expect(asHttp(gateways.verifyServiceToken(await issuer.accessToken(), 'call-in'))).rejects.toMatchObject({ status: 401 });
    await expect(asHttp(gateways.verifyServiceToken(await issuer.bad.foreignKey('access'), 'call-in'))).rejects.toMatchObject({ status: 401 });
  });

  it('reads roles at a configured claim path', async () => {
    const custom = await createIdentity(
      issuer.identityConfig({ service_roles_claim: 'resource_access.convene.roles', authorized_parties: ['convene', 'gateway'] }),
    );
    const token = await issuer.accessToken({ resource_access: { convene: { roles: ['call-in'] } } });
    await expect(custom.verifyServiceToken(token, 'call-in')).resolves.toMatchObject({ roles: ['call-in'] });
    const gatewayToken = await issuer.serviceToken(['call-in']);
    await expect(asHttp(custom.verifyServiceToken(gatewayToken, 'call-in'))).rejects.toMatchObject({ status: 401 });
  });
});

describe('provider info', () => {
  it('names the provider and its issuer URL', () => {
    expect(identity.providerInfo()).toEqual({ name: 'Test IdP', url: issuer.issuer });
  });
});
