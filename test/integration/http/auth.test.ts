import { describe, expect, it } from 'vitest';
import { dbOf, useTestApp } from '../../support/test-app.js';

const app = useTestApp();

const post = (body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  app.request('POST', '/v1/auth/login', { headers, body: typeof body === 'string' ? body : JSON.stringify(body) });

describe('get_login_provider', () => {
  it('names the OIDC provider that clients log in with', async () => {
    const { data, response } = await app.api().GET('/auth/login');
    expect(response.status).toBe(200);
    expect(data).toEqual({ oidc: { name: 'default', url: app.issuer.issuer } });
  });
});

describe('login', () => {
  it('creates the user on the first login and updates them on the next', async () => {
    const alice = await app.login('alice');
    const first = await app.api(alice.accessToken).GET('/users/me');
    expect(first.data).toMatchObject({ email: 'alice@example.test', firstname: 'Alice', lastname: 'Tester', display_name: 'Alice Tester' });

    const idToken = await app.issuer.idToken({ sub: 'sub-alice', email: 'alice@new.example', given_name: 'Alicia', family_name: 'Hansen' });
    const again = await app.api().POST('/auth/login', { body: { id_token: idToken } });
    expect(again.response.status).toBe(200);
    expect(again.data).toEqual({ permissions: [] });
    const after = await app.api(alice.accessToken).GET('/users/me');
    expect(after.data).toMatchObject({ id: alice.id, email: 'alice@new.example', firstname: 'Alicia', lastname: 'Hansen' });
  });

  it.each([
    ['expired', () => app.issuer.bad.expired('id')],
    ['of another issuer', () => app.issuer.bad.wrongIssuer('id')],
    ['for another audience', () => app.issuer.bad.wrongAudience('id')],
    ['with a bad signature', () => app.issuer.bad.foreignKey('id')],
    ['with alg none', () => app.issuer.bad.algNone('id')],
    ['with an unknown kid', () => app.issuer.bad.unknownKid('id')],
    ['signed with HMAC over the public key', () => app.issuer.bad.hmacWithPublicKey('id')],
    ['malformed', async () => app.issuer.bad.malformed()],
  ])('refuses an ID token %s with 400 invalid_id_token and creates nobody', async (_what, mint) => {
    const res = await post({ id_token: await mint() });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text_)).toMatchObject({ code: 'invalid_id_token', status: '400' });
    const count = await app.convene.database.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(0);
  });

  it('refuses a body without id_token', async () => {
    const res = await post({});
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text_)).toMatchObject({ code: 'validation_failed', errors: [{ field: 'id_token', code: 'value_required' }] });
  });

  it('refuses invalid JSON with 400 invalid_json', async () => {
    const res = await post('{"id_token": ');
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text_).code).toBe('invalid_json');
  });

  it('refuses a body that is not JSON with 415', async () => {
    const res = await post('id_token=x', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(res.status).toBe(415);
    expect(JSON.parse(res.text_).code).toBe('invalid_content_type');
  });

  it('refuses a body over 1 MiB with 413', async () => {
    const res = await post({ id_token: 'x'.repeat(1024 * 1024 + 1) });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.text_).code).toBe('payload_too_large');
  });
});

describe('Bearer access tokens', () => {
  it('refuses a valid token of a subject that never logged in with 401 unknown_user', async () => {
    const token = await app.issuer.accessToken({ sub: 'never-logged-in' });
    const { response, error } = await app.api(token).GET('/users/me');
    expect(response.status).toBe(401);
    expect(error).toMatchObject({ code: 'unknown_user' });
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
  });

  it('refuses a token it verified before once its user is gone: the token cache never stands in for the user', async () => {
    const alice = await app.login('alice');
    expect((await app.api(alice.accessToken).GET('/users/me')).response.status).toBe(200); // the token is now cached
    await dbOf(app).deleteFrom('users').where('id', '=', alice.id).execute();
    await new Promise((resolve) => setTimeout(resolve, 2_100)); // the users of recent requests are kept 2 s
    const { response, error } = await app.api(alice.accessToken).GET('/users/me');
    expect(response.status).toBe(401);
    expect(error).toMatchObject({ code: 'unknown_user' });
  });

  it('refuses a valid token whose subject holds NUL with 401 unknown_user, as login never stores one (once a 500)', async () => {
    const token = await app.issuer.accessToken({ sub: 'sub-\u0000-nul' });
    const { response, error } = await app.api(token).GET('/users/me');
    expect(response.status).toBe(401);
    expect(error).toMatchObject({ code: 'unknown_user', status: '401' });
  });

  it('refuses a request without Authorization with 401 and a challenge', async () => {
    const { response } = await app.api().GET('/users/me');
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it.each([
    ['expired', () => app.issuer.bad.expired('access')],
    ['of another issuer', () => app.issuer.bad.wrongIssuer('access')],
    ['with a bad signature', () => app.issuer.bad.foreignKey('access')],
    ['with alg none', () => app.issuer.bad.algNone('access')],
    ['malformed', async () => app.issuer.bad.malformed()],
  ])('refuses an access token %s with 401', async (_what, mint) => {
    await app.login('alice');
    const { response, error } = await app.api(await mint()).GET('/users/me');
    expect(response.status).toBe(401);
    expect(error).toMatchObject({ code: 'unauthorized', status: '401' });
  });

  it('refuses an unknown authorization scheme', async () => {
    const res = await app.request('GET', '/v1/users/me', { headers: { authorization: 'Basic YWxpY2U6eA==' } });
    expect(res.status).toBe(401);
  });
});

/**
 * Issue 22, finding 1: the issuer signs tokens for every client of its realm, and ID tokens too;
 * only access tokens meant for Convene ([oidc] audiences / authorized_parties) open the API.
 */
describe('tokens the issuer signed for another client, and ID tokens', () => {
  const asAlice = async () => {
    const alice = await app.login('alice');
    return { alice, otherClients: await app.issuer.bad.otherClient('access', { sub: `sub-${alice.name}` }) };
  };

  it("refuses another client's access token of a registered user with 401, reading and deleting alike", async () => {
    const { alice, otherClients } = await asAlice();
    const me = await app.api(otherClients).GET('/users/me');
    expect(me.response.status).toBe(401);
    expect(me.error).toMatchObject({ code: 'unauthorized', status: '401' });
    expect(me.response.headers.get('www-authenticate')).toBe('Bearer error="invalid_token", error_description="The provided access token is invalid"');

    const room = await app.api(alice.accessToken).POST('/rooms', { body: { enable_sip: false, waiting_room: false } });
    expect(room.response.status).toBe(201);
    const path = { params: { path: { room_id: room.data!.id } } };
    expect((await app.api(otherClients).DELETE('/rooms/{room_id}', path)).response.status).toBe(401);
    expect((await app.api(alice.accessToken).GET('/rooms/{room_id}', path)).response.status).toBe(200);
  });

  it("refuses the user's own ID token as an access token with 401", async () => {
    const { alice } = await asAlice();
    const { response, error } = await app.api(alice.idToken).GET('/users/me');
    expect(response.status).toBe(401);
    expect(error).toMatchObject({ code: 'unauthorized' });
  });

  it("refuses, at the gateway check, another client's token carrying the call-in role", async () => {
    const body = { id: '0123456789', pin: '0123456789' };
    const roles = { realm_access: { roles: ['call-in'] } };
    const gateway = await app.api(await app.issuer.serviceToken(['call-in'])).POST('/services/call_in/start', { body });
    expect(gateway.response.status).toBe(400); // through the gateway check, to the unknown id
    const otherClient = await app.api(await app.issuer.bad.otherClient('access', roles)).POST('/services/call_in/start', { body });
    expect(otherClient.response.status).toBe(401);
    expect(otherClient.error).toMatchObject({ code: 'unauthorized' });
  });
});
