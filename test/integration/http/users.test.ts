import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { useTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { startKeycloakAdminStandIn, type KeycloakAdminStandIn } from '../../support/keycloak-admin-stand-in.js';
import { createEvent, send, timeIndependentBody } from '../../support/events.js';

const app = useTestApp();
let alice: TestUser;
beforeEach(async () => {
  alice = await app.login('alice');
});

const patchMe = (token: string, body: Record<string, unknown>) =>
  app.request('PATCH', '/v1/users/me', {
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('get_me', () => {
  it('answers the current user with their settings', async () => {
    const { data, response } = await app.api(alice.accessToken).GET('/users/me');
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ id: alice.id, email: alice.email, language: 'en-US', tariff_status: 'default' });
  });
  it('is refused to anonymous callers', async () => {
    expect((await app.api().GET('/users/me')).response.status).toBe(401);
  });
});

describe('patch_me', () => {
  it.each([
    ['title', 255],
    ['display_name', 255],
    ['language', 35],
    ['dashboard_theme', 128],
    ['conference_theme', 128],
  ])('accepts %s of %i characters and refuses one more', async (field, max) => {
    // a language tag is RFC 5646-shaped: subtags of at most 8 characters
    const value = (n: number) => (field === 'language' ? `en${'-abcdefgh'.repeat(4)}`.slice(0, n).replace(/-$/, 'x') : 'x'.repeat(n));
    const ok = await patchMe(alice.accessToken, { [field]: value(max) });
    expect(ok.status, ok.text_).toBe(200);
    expect(JSON.parse(ok.text_)[field]).toBe(value(max));
    const tooLong = await patchMe(alice.accessToken, { [field]: value(max + 1) });
    expect(tooLong.status).toBe(400);
    expect(JSON.parse(tooLong.text_)).toMatchObject({ code: 'validation_failed', errors: [{ field, code: 'invalid_length' }] });
  });

  it('refuses an empty body and ignores unknown fields', async () => {
    expect((await patchMe(alice.accessToken, {})).status).toBe(400);
    const res = await patchMe(alice.accessToken, { title: 'Dr.', e2e_encryption: true });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text_).title).toBe('Dr.');
  });

  it('refuses a body that is not JSON with 415 and one over the body limit with 413', async () => {
    const headers = (type: string) => ({ authorization: `Bearer ${alice.accessToken}`, 'content-type': type });
    const form = await app.request('PATCH', '/v1/users/me', { headers: headers('application/x-www-form-urlencoded'), body: 'title=Dr.' });
    expect(form.status).toBe(415);
    expect(JSON.parse(form.text_)).toMatchObject({ code: 'invalid_content_type', status: '415' });
    const huge = await app.request('PATCH', '/v1/users/me', { headers: headers('application/json'), body: JSON.stringify({ title: 'x'.repeat(1024 * 1024) }) });
    expect(huge.status).toBe(413);
    expect(JSON.parse(huge.text_)).toMatchObject({ code: 'payload_too_large', status: '413' });
  });

  it('refuses a display name that is blank after trimming', async () => {
    const res = await patchMe(alice.accessToken, { display_name: '   ' });
    expect(res.status).toBe(400);
  });

  it('refuses to change the display name when disallow_custom_display_name is on', async () => {
    const strict = await app.withConfig({ endpoints: { disallow_custom_display_name: true } });
    try {
      const res = await strict.request('PATCH', '/v1/users/me', {
        headers: { authorization: `Bearer ${alice.accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ display_name: 'Someone Else' }),
      });
      expect(res.status).toBe(400);
      expect(JSON.parse(res.text_).code).toBe('display_name_change_forbidden');
      const other = await strict.request('PATCH', '/v1/users/me', {
        headers: { authorization: `Bearer ${alice.accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'Prof.' }),
      });
      expect(other.status).toBe(200);
    } finally {
      await strict.close();
    }
  });
});

describe('get_my_tariff', () => {
  it('answers the default tariff from configuration', async () => {
    const { data, response } = await app.api(alice.accessToken).GET('/users/me/tariff');
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ name: 'default', quotas: {} });
    expect(data!.enabled_modules).toEqual(expect.arrayContaining(['control', 'timer']));
  });

  it('offers no media module without Janus servers ([media] janus_urls)', async () => {
    const { data } = await app.api(alice.accessToken).GET('/users/me/tariff');
    expect(data!.enabled_modules).not.toContain('media');
    expect(data!.modules.map((module) => module.id)).not.toContain('media');
  });
});

describe('get_user', () => {
  it('answers another registered user’s public profile', async () => {
    const bob = await app.login('bob');
    const { data, response } = await app.api(alice.accessToken).GET('/users/{user_id}', { params: { path: { user_id: bob.id } } });
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ id: bob.id, email: bob.email, display_name: 'Bob Tester' });
  });
  it('answers 404 for an unknown id and 400 for one that is not a uuid', async () => {
    const unknown = await app.api(alice.accessToken).GET('/users/{user_id}', {
      params: { path: { user_id: '00000000-0000-4000-8000-000000000000' } },
    });
    expect(unknown.response.status).toBe(404);
    const bad = await app.request('GET', '/v1/users/not-a-uuid', { headers: { authorization: `Bearer ${alice.accessToken}` } });
    expect(bad.status).toBe(400);
  });
  it('is refused to anonymous callers', async () => {
    const res = await app.request('GET', `/v1/users/${alice.id}`);
    expect(res.status).toBe(401);
  });
});

describe('get_users', () => {
  it('lists the caller but not strangers', async () => {
    await app.login('stranger');
    const { data, response } = await app.api(alice.accessToken).GET('/users');
    expect(response.status).toBe(200);
    expect(data!.map((u) => u.id)).toEqual([alice.id]);
  });
  it('enforces per_page 1..100 and page ≥ 1', async () => {
    const get = (q: string) => app.request('GET', `/v1/users?${q}`, { headers: { authorization: `Bearer ${alice.accessToken}` } });
    expect((await get('per_page=100')).status).toBe(200);
    expect((await get('per_page=1&page=1')).status).toBe(200);
    for (const q of ['per_page=0', 'per_page=101', 'page=0', 'page=x', 'per_page=1&per_page=2']) {
      const res = await get(q);
      expect(res.status, q).toBe(400);
      expect(JSON.parse(res.text_).code).toBe('validation_failed');
    }
  });
});

describe('find_users', () => {
  const find = (a: TestApp, token: string, q: string) =>
    a.request('GET', `/v1/users/find?q=${encodeURIComponent(q)}`, { headers: { authorization: `Bearer ${token}` } });

  /** `host` invites `guests` to an event of theirs, as the web app does: afterwards they share it. */
  const shareAnEvent = async (host: TestUser, guests: TestUser[]) => {
    const event = await createEvent(app, host, timeIndependentBody(), '?suppress_email_notification=true');
    for (const guest of guests) {
      const res = await send(app, 'POST', `/events/${event.id}/invites?suppress_email_notification=true`, {
        token: host.accessToken,
        body: { invitee: guest.id, role: 'user' },
      });
      expect(res.status).toBe(201);
    }
  };

  it('finds registered users by name and e-mail, case-insensitively', async () => {
    const bob = await app.login('bob');
    await shareAnEvent(alice, [bob]);
    const res = await find(app, alice.accessToken, 'BOB');
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text_)).toEqual([expect.objectContaining({ kind: 'registered', id: bob.id })]);
    expect(JSON.parse((await find(app, alice.accessToken, 'example.test')).text_)).toHaveLength(2);
  });

  it('shows a stranger no one for parts of names or addresses (issue 22), but finds a user by their whole address', async () => {
    const bob = await app.login('bob');
    await shareAnEvent(alice, [bob]);
    const mallory = await app.login('mallory');
    for (const q of ['example.test', 'ali', 'bob', '@ex', 'Tester']) {
      const found = JSON.parse((await find(app, mallory.accessToken, q)).text_) as { email: string }[];
      expect(
        found.map((user) => user.email).filter((email) => email !== mallory.email),
        q,
      ).toEqual([]);
    }
    // the web app's invitee search: the typed address gives the registered user, whom it invites by id
    const res = await find(app, mallory.accessToken, 'Alice@Example.test');
    expect(JSON.parse(res.text_)).toEqual([expect.objectContaining({ kind: 'registered', id: alice.id, email: alice.email })]);
  });

  it('refuses a query shorter than 3 characters', async () => {
    const res = await find(app, alice.accessToken, 'ab');
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text_).code).toBe('query_too_short');
  });

  it('treats % and _ literally', async () => {
    await app.login('bob');
    expect(JSON.parse((await find(app, alice.accessToken, '%%%')).text_)).toEqual([]);
  });

  it('answers 404 when disable_users_find is on', async () => {
    const off = await app.withConfig({ endpoints: { disable_users_find: true } });
    try {
      expect((await find(off, alice.accessToken, 'alice')).status).toBe(404);
    } finally {
      await off.close();
    }
  });

  describe('with users_find_use_kc', () => {
    let kc: KeycloakAdminStandIn;
    beforeAll(async () => {
      kc = await startKeycloakAdminStandIn({
        clientId: 'convene-admin',
        clientSecret: 's3cret',
        users: [
          { username: 'carol', email: 'carol@example.test', firstName: 'Carol', lastName: 'Directory' },
          { username: 'alice', email: 'alice@example.test', firstName: 'Alice', lastName: 'Tester' },
        ],
      });
    });
    afterAll(() => kc?.close());

    it('adds the identity provider’s users who never logged in, as unregistered', async () => {
      const withKc = await app.withConfig({
        endpoints: { users_find_use_kc: true },
        oidc: {
          admin_api_url: kc.adminApiUrl,
          admin_client_id: 'convene-admin',
          admin_client_secret: 's3cret',
          admin_token_url: kc.tokenEndpoint,
        },
      });
      try {
        const res = await find(withKc, alice.accessToken, 'example.test');
        expect(res.status).toBe(200);
        const found = JSON.parse(res.text_);
        expect(found).toContainEqual(expect.objectContaining({ kind: 'unregistered', email: 'carol@example.test' }));
        expect(found.filter((u: { email: string }) => u.email === 'alice@example.test')).toEqual([
          expect.objectContaining({ kind: 'registered', id: alice.id }),
        ]);
      } finally {
        await withKc.close();
      }
    });
  });
});
