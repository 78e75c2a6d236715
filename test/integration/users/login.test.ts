import { beforeAll, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';

import type { Config } from '../../../src/config/schema.js';
import type { DB } from '../../../src/db/schema.js';
import type { UserServiceDeps } from '../../../src/domain/users/users.service.js';
import { claimsFor, HOUR, ISSUER, rejection, userServiceFor, useUsersTestDatabase } from '../../support/users.js';

const testDatabase = useUsersTestDatabase();
let db: Kysely<DB>;
beforeAll(() => {
  db = testDatabase();
});

function service(endpoints: Partial<Config['endpoints']> = {}, extra: Partial<UserServiceDeps> = {}) {
  return userServiceFor(db, {
    endpoints,
    users: { default_language: 'de-DE', avatar_base_url: 'https://avatars.test/avatar/' },
    tariffs: {
      default: 'basic',
      definitions: { basic: {}, pro: { quotas: { room_participant_limit: 500 } } },
    },
    deps: extra,
  });
}

describe('login', () => {
  it('creates a user on the first login, from the claims and the configured defaults', async () => {
    const users = service();
    const claims = claimsFor({ email: 'Alice@Example.org', firstname: 'Alice', lastname: 'Hansen' });
    const { user, created } = await users.login(claims);

    expect(created).toBe(true);
    expect(user).toMatchObject({
      oidc_issuer: ISSUER,
      oidc_sub: claims.subject,
      email: 'Alice@Example.org',
      title: '',
      firstname: 'Alice',
      lastname: 'Hansen',
      display_name: 'Alice Hansen',
      // Libravatar: MD5 of the lower-cased address
      avatar_url: 'https://avatars.test/avatar/fbf7c6aec1d4280b7c2704c1c0478bd6',
      language: 'de-DE',
      tariff_name: null,
      tariff_status: 'default',
      id_token_exp: claims.expires_at,
    });
    expect(user.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await db.selectFrom('users').select('id').execute()).toEqual([{ id: user.id }]);
    expect(users.tariffOf(user).name).toBe('basic');
  });

  it('takes display name, avatar and tariff from the claims when they carry them', async () => {
    const users = service();
    const { user } = await users.login(
      claimsFor({ display_name: '  Countess  ', avatar_url: 'https://pics.test/ada.png', tariff: 'pro', tariff_status: 'paid' }),
    );
    expect(user).toMatchObject({ display_name: 'Countess', avatar_url: 'https://pics.test/ada.png', tariff_name: 'pro', tariff_status: 'paid' });
    expect(users.tariffOf(user)).toMatchObject({ name: 'pro', quotas: { room_participant_limit: 500 } });
  });

  it('falls back to the default tariff and status for values it does not know', async () => {
    const users = service();
    const { user } = await users.login(claimsFor({ tariff: 'platinum', tariff_status: 'gold-plated' }));
    expect(user.tariff_status).toBe('default');
    expect(user.tariff_name).toBe('platinum'); // kept: configuring that tariff later gives it to the user
    expect(users.tariffOf(user).name).toBe('basic');
  });

  it('names a user without names after their address, and caps long names at 255 characters', async () => {
    const users = service();
    const nameless = await users.login(claimsFor({ email: 'x@example.org', firstname: '', lastname: '' }));
    expect(nameless.user.display_name).toBe('x@example.org');
    const verbose = await users.login(claimsFor({ display_name: '😀'.repeat(300) }));
    expect([...verbose.user.display_name]).toHaveLength(255);
  });

  it('updates what the identity provider owns on a later login and keeps what the user chose', async () => {
    const users = service();
    const first = claimsFor();
    const { user } = await users.login(first);
    await users.patchMe(user, { title: 'Dr.', display_name: 'Ada L.', language: 'fr-FR', dashboard_theme: 'dark' });

    const later = {
      ...first,
      email: 'ada@new.example',
      firstname: 'Augusta',
      lastname: 'King',
      display_name: 'Countess of Lovelace',
      avatar_url: 'https://pics.test/new.png',
      tariff: 'pro',
      tariff_status: 'paid',
      expires_at: new Date(first.expires_at.getTime() + HOUR),
    };
    const again = await users.login(later);

    expect(again.created).toBe(false);
    expect(again.user).toMatchObject({
      id: user.id,
      email: 'ada@new.example',
      firstname: 'Augusta',
      lastname: 'King',
      avatar_url: 'https://pics.test/new.png',
      tariff_name: 'pro',
      tariff_status: 'paid',
      id_token_exp: later.expires_at,
      // the user's own choices survive
      title: 'Dr.',
      display_name: 'Ada L.',
      language: 'fr-FR',
      dashboard_theme: 'dark',
    });
    expect(await db.selectFrom('users').select('id').execute()).toHaveLength(1);
  });

  it("enforces the identity provider's display name with disallow_custom_display_name", async () => {
    const users = service({ disallow_custom_display_name: true });
    const claims = claimsFor();
    const { user } = await users.login(claims);
    await db.updateTable('users').set({ display_name: 'Chosen before the switch' }).where('id', '=', user.id).execute();

    const again = await users.login({ ...claims, display_name: 'Official Name' });
    expect(again.user.display_name).toBe('Official Name');
  });

  it('tells apart subjects of different issuers', async () => {
    const users = service();
    const claims = claimsFor();
    const a = await users.login(claims);
    const b = await users.login({ ...claims, issuer: 'https://other-idp.test' });
    expect(b.created).toBe(true);
    expect(b.user.id).not.toBe(a.user.id);
  });

  it('creates one user when two first logins race', async () => {
    const users = service();
    const claims = claimsFor();
    const results = await Promise.all([users.login(claims), users.login(claims), users.login(claims)]);
    expect(results.filter((result) => result.created)).toHaveLength(1);
    expect(new Set(results.map((result) => result.user.id)).size).toBe(1);
    expect(await db.selectFrom('users').select('id').execute()).toHaveLength(1);
  });
});

describe('login converts e-mail invites', () => {
  async function eventBy(creatorId: string): Promise<string> {
    const room = await db.insertInto('rooms').values({ created_by: creatorId }).returning('id').executeTakeFirstOrThrow();
    const event = await db
      .insertInto('events')
      .values({ room_id: room.id, created_by: creatorId, updated_by: creatorId, title: 'Meeting', is_time_independent: true })
      .returning('id')
      .executeTakeFirstOrThrow();
    return event.id;
  }

  it('turns every e-mail invite of the address into a pending user invite with its role, and removes it', async () => {
    const users = service();
    const { user: host } = await users.login(claimsFor());
    const [asGuest, asModerator, asUser, forSomeoneElse] = [await eventBy(host.id), await eventBy(host.id), await eventBy(host.id), await eventBy(host.id)];
    await db
      .insertInto('event_email_invites')
      .values([
        { event_id: asGuest, email: 'bob@example.org', role: 'guest', created_by: host.id },
        { event_id: asModerator, email: 'bob@example.org', role: 'moderator', created_by: host.id },
        { event_id: asUser, email: 'bob@example.org', role: 'user', created_by: host.id },
        { event_id: forSomeoneElse, email: 'carol@example.org', role: 'user', created_by: host.id },
      ])
      .execute();

    const { user: bob } = await users.login(claimsFor({ email: 'Bob@Example.ORG' }));

    const invites = await db
      .selectFrom('event_invites')
      .select(['event_id', 'invitee', 'role', 'status', 'created_by'])
      .orderBy('role')
      .orderBy('event_id')
      .execute();
    expect(invites).toEqual([
      { event_id: asModerator, invitee: bob.id, role: 'moderator', status: 'pending', created_by: host.id },
      ...[asGuest, asUser].sort().map((event_id) => ({ event_id, invitee: bob.id, role: 'user', status: 'pending', created_by: host.id })),
    ]);
    expect(await db.selectFrom('event_email_invites').select(['event_id', 'email']).execute()).toEqual([
      { event_id: forSomeoneElse, email: 'carol@example.org' },
    ]);
  });

  it('keeps an existing direct invite when the address also had an e-mail invite', async () => {
    const users = service();
    const { user: host } = await users.login(claimsFor());
    const bobClaims = claimsFor({ email: 'bob@old.example' });
    const { user: bob } = await users.login(bobClaims);
    const event = await eventBy(host.id);
    await db.insertInto('event_invites').values({ event_id: event, invitee: bob.id, role: 'moderator', created_by: host.id, status: 'accepted' }).execute();
    await db.insertInto('event_email_invites').values({ event_id: event, email: 'bob@new.example', role: 'guest', created_by: host.id }).execute();

    // the identity provider now reports Bob's new address
    await users.login({ ...bobClaims, email: 'bob@new.example' });

    expect(await db.selectFrom('event_invites').select(['invitee', 'role', 'status']).execute()).toEqual([
      { invitee: bob.id, role: 'moderator', status: 'accepted' },
    ]);
    expect(await db.selectFrom('event_email_invites').selectAll().execute()).toEqual([]);
  });

  it("refuses a disabled user's login and writes none of it: profile, groups and invites stay as they were", async () => {
    const users = service();
    const { user: host } = await users.login(claimsFor());
    const bobClaims = claimsFor({ email: 'bob@example.org', firstname: 'Bob', groups: ['/dev'] });
    const { user: bob } = await users.login(bobClaims);
    await db.updateTable('users').set({ disabled_at: new Date() }).where('id', '=', bob.id).execute();
    const event = await eventBy(host.id);
    await db.insertInto('event_email_invites').values({ event_id: event, email: 'bob@example.org', role: 'user', created_by: host.id }).execute();
    const rowBefore = await db.selectFrom('users').selectAll().where('id', '=', bob.id).executeTakeFirstOrThrow();

    const error = await rejection(users.login({ ...bobClaims, firstname: 'Robert', groups: ['/ops'] }));

    expect(error).toMatchObject({ status: 400, code: 'invalid_id_token', message: 'The user is disabled' });
    expect(await db.selectFrom('users').selectAll().where('id', '=', bob.id).executeTakeFirstOrThrow()).toEqual(rowBefore);
    expect(await db.selectFrom('user_groups').select('name').where('user_id', '=', bob.id).execute()).toEqual([{ name: '/dev' }]);
    expect(await db.selectFrom('event_invites').select('invitee').where('event_id', '=', event).execute()).toEqual([]);
    expect(await db.selectFrom('event_email_invites').select('email').where('event_id', '=', event).execute()).toEqual([{ email: 'bob@example.org' }]);
  });
});

describe('authenticate', () => {
  it('answers 401 unknown_user for a subject that never logged in', async () => {
    const users = service();
    const error = await rejection(users.authenticate({ issuer: ISSUER, subject: 'nobody', expires_at: new Date(Date.now() + HOUR) }));
    expect(error.status).toBe(401);
    expect(error.code).toBe('unknown_user');
    expect(error.headers?.['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
  });

  it('finds the user of a logged-in subject, and only under its own issuer', async () => {
    const users = service();
    const claims = claimsFor();
    const { user } = await users.login(claims);
    const grant = { issuer: ISSUER, subject: claims.subject, expires_at: new Date(Date.now() + HOUR) };
    expect(await users.authenticate(grant)).toEqual(user);
    expect((await rejection(users.authenticate({ ...grant, issuer: 'https://other-idp.test' }))).code).toBe('unknown_user');
  });

  it('serves a deleted user from its cache for at most the cache lifetime', async () => {
    let now = 1_000_000;
    const users = service({}, { authCache: { ttl_ms: 2_000, now: () => now } });
    const claims = claimsFor();
    const { user } = await users.login(claims);
    const grant = { issuer: ISSUER, subject: claims.subject, expires_at: new Date(Date.now() + HOUR) };
    await users.authenticate(grant);

    await db.deleteFrom('users').where('id', '=', user.id).execute();
    now += 1_999;
    expect((await users.authenticate(grant)).id).toBe(user.id);
    now += 1;
    expect((await rejection(users.authenticate(grant))).code).toBe('unknown_user');
  });

  it('sees its own writes at once: a login or a profile change drops the cached user', async () => {
    const now = 1_000_000; // frozen: only the writes can refresh the cache
    const users = service({}, { authCache: { ttl_ms: 60_000, now: () => now } });
    const claims = claimsFor();
    const { user } = await users.login(claims);
    const grant = { issuer: ISSUER, subject: claims.subject, expires_at: new Date(Date.now() + HOUR) };
    await users.authenticate(grant);

    await users.login({ ...claims, firstname: 'Augusta' });
    expect((await users.authenticate(grant)).firstname).toBe('Augusta');
    await users.patchMe(user, { title: 'Prof.' });
    expect((await users.authenticate(grant)).title).toBe('Prof.');
  });

  it('reads the database every time with the cache off', async () => {
    const users = service({}, { authCache: { ttl_ms: 0 } });
    const claims = claimsFor();
    const { user } = await users.login(claims);
    const grant = { issuer: ISSUER, subject: claims.subject, expires_at: new Date(Date.now() + HOUR) };
    await users.authenticate(grant);
    await db.deleteFrom('users').where('id', '=', user.id).execute();
    expect((await rejection(users.authenticate(grant))).code).toBe('unknown_user');
  });
});
