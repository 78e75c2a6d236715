/**
 * The groups of a registered user (the `x_grp` claim), which the chat's
 * group messages go by: stored at the first login, replaced by each later login (a group the IdP
 * dropped goes, a new one comes, a missing claim leaves none), kept apart per user, gone with the
 * user; and, through the HTTP login with an ID token of the test issuer, taken from the claim (at
 * most `MAX_GROUPS` of them, none that the database cannot hold: such a name claim is left out too,
 * such a subject refused).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';

import type { DB } from '../../../src/db/schema.js';
import { MAX_GROUPS } from '../../../src/domain/identity/claims.js';
import { dbOf, useTestApp } from '../../support/test-app.js';
import { claimsFor, userServiceFor, useUsersTestDatabase } from '../../support/users.js';

const groupsOf = async (db: Kysely<DB>, userId: string) =>
  (await db.selectFrom('user_groups').select('name').where('user_id', '=', userId).orderBy('name').execute()).map((row) => row.name);

describe('the groups of a login', () => {
  const testDatabase = useUsersTestDatabase();
  let db: Kysely<DB>;
  beforeAll(() => {
    db = testDatabase();
  });

  it('stores the groups of the first login and replaces them with those of each later one', async () => {
    const users = userServiceFor(db);
    const claims = claimsFor({ groups: ['/OpenTalk/OU/Backend', '/Role/Developer'] });
    const { user } = await users.login(claims);
    expect(await groupsOf(db, user.id)).toEqual(['/OpenTalk/OU/Backend', '/Role/Developer']);

    await users.login({ ...claims, groups: ['/Role/Developer', '/Role/Lead'] });
    expect(await groupsOf(db, user.id)).toEqual(['/Role/Developer', '/Role/Lead']);

    await users.login({ ...claims, groups: [] });
    expect(await groupsOf(db, user.id)).toEqual([]);
    await users.login({ ...claims, groups: ['/Role/Lead'] });
    const { groups: _, ...withoutClaim } = claims;
    await users.login(withoutClaim);
    expect(await groupsOf(db, user.id)).toEqual([]);
  });

  it("keeps each user's groups to that user, and drops them with the user", async () => {
    const users = userServiceFor(db);
    const { user: ada } = await users.login(claimsFor({ groups: ['/dev', '/ops'] }));
    const { user: bob } = await users.login(claimsFor({ groups: ['/dev'] }));
    await users.login(claimsFor({ subject: bob.oidc_sub, groups: ['/qa'] }));
    expect([await groupsOf(db, ada.id), await groupsOf(db, bob.id)]).toEqual([['/dev', '/ops'], ['/qa']]);
    await db.deleteFrom('users').where('id', '=', ada.id).execute();
    expect(await groupsOf(db, ada.id)).toEqual([]);
  });

  it('refuses a group name the database cannot hold, should one get past the claim parsing', async () => {
    const users = userServiceFor(db);
    await expect(users.login(claimsFor({ groups: ['x'.repeat(256)] }))).rejects.toThrow(/user_groups_name_check|check constraint/);
    await expect(users.login(claimsFor({ groups: [''] }))).rejects.toThrow(/check constraint/);
    const { user } = await users.login(claimsFor({ groups: ['x'.repeat(255)] }));
    expect(await groupsOf(db, user.id)).toEqual(['x'.repeat(255)]);
  });
});

describe('POST /v1/auth/login with x_grp', () => {
  const app = useTestApp();

  it("takes the user's groups from the ID token's x_grp claim, leaving out what is no group name", async () => {
    const alice = await app.login('alice', { x_grp: ['/dev', '/dev', '', 7, '/ops', 'y'.repeat(256), null] });
    expect(await groupsOf(dbOf(app), alice.id)).toEqual(['/dev', '/ops']);
    await app.login('alice', { x_grp: '/dev' });
    expect(await groupsOf(dbOf(app), alice.id)).toEqual([]);
  });

  it('leaves out a group or a name holding NUL, which PostgreSQL cannot store, instead of failing the login', async () => {
    const bob = await app.login('bob', { x_grp: ['/a\u0000b', '/dev'], given_name: 'B\u0000b', nickname: 'Bobby\u0000' });
    expect(await groupsOf(dbOf(app), bob.id)).toEqual(['/dev']);
    const me = await app.api(bob.accessToken).GET('/users/me');
    expect(me.data).toMatchObject({ firstname: '', display_name: 'Tester' });
    // a subject holding NUL is no subject: the ID token is refused as such
    const idToken = await app.issuer.idToken({ sub: 'sub-\u0000', email: 'nul@example.test' });
    const login = await app.api().POST('/auth/login', { body: { id_token: idToken } });
    expect([login.response.status, (login.error as { code?: string } | undefined)?.code]).toEqual([400, 'invalid_id_token']);
  });

  // 2,000 names are about as many as an ID token within the 32 KiB the service takes holds
  it(`keeps the first ${MAX_GROUPS} groups of an ID token that names 2,000`, async () => {
    const names = Array.from({ length: 2_000 }, (_, i) => `/g${String(i).padStart(4, '0')}`);
    const carol = await app.login('carol', { x_grp: names });
    expect(await groupsOf(dbOf(app), carol.id)).toEqual(names.slice(0, MAX_GROUPS));
    await app.login('carol', { x_grp: names.slice(MAX_GROUPS / 2) });
    expect(await groupsOf(dbOf(app), carol.id)).toEqual(names.slice(MAX_GROUPS / 2, MAX_GROUPS * 1.5));
  });
});
