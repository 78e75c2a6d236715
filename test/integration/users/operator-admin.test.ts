/**
 * What the operator's admin commands (`convene users …`, `convene tariffs …`) do to the running
 * service, through the domain functions they call (the command lines themselves are
 * test/integration/cli/convene-cli.test.ts): a disabled user's logins and access tokens are refused
 * with the contract's codes until they are enabled again, and a tariff created in the database and
 * assigned to a user is that user's tariff, on a running instance from its next re-reading of the
 * stored tariffs (every minute) and on a new one at once, surviving their logins unless the
 * identity provider's claim owns the assignment.
 */
import { describe, expect, it } from 'vitest';
import { AdminError } from '../../../src/domain/admin/admin-error.js';
import { assignTariff, createTariff, listTariffs } from '../../../src/domain/admin/tariff-admin.js';
import { setDisabled } from '../../../src/domain/admin/user-admin.js';
import { dbOf, useTestApp } from '../../support/test-app.js';

const app = useTestApp();

describe('a disabled user', () => {
  it('is refused at login (400 invalid_id_token) and with their access token (401 unauthorized), until enabled again', async () => {
    const alice = await app.login('alice');
    await setDisabled(dbOf(app), alice.email, true);
    // an instance that has not seen alice: `app` keeps her for its user cache's 2 s
    const other = await app.withConfig({});
    try {
      const me = await other.api(alice.accessToken).GET('/users/me');
      expect(me.response.status).toBe(401);
      expect(me.error).toMatchObject({ code: 'unauthorized', message: 'The user is disabled' });
      const login = await other.api().POST('/auth/login', { body: { id_token: alice.idToken } });
      expect(login.response.status).toBe(400);
      expect(login.error).toMatchObject({ code: 'invalid_id_token', message: 'The user is disabled' });

      await setDisabled(dbOf(app), alice.id, false);
      expect((await other.api().POST('/auth/login', { body: { id_token: alice.idToken } })).response.status).toBe(200);
      expect((await other.api(alice.accessToken).GET('/users/me')).data?.id).toBe(alice.id);
    } finally {
      await other.close();
    }
  });

  it('keeps their rooms', async () => {
    const alice = await app.login('alice');
    const room = await app.api(alice.accessToken).POST('/rooms', { body: { enable_sip: false, waiting_room: false } });
    await setDisabled(dbOf(app), alice.id, true);
    const rows = await dbOf(app).selectFrom('rooms').select('id').where('created_by', '=', alice.id).execute();
    expect(rows.map((row) => row.id)).toEqual([room.data!.id]);
  });

  it('is named by id or e-mail address; anything else is refused', async () => {
    await expect(setDisabled(dbOf(app), 'nobody@example.test', true)).rejects.toThrow(new AdminError('no user has the e-mail address nobody@example.test'));
    await expect(setDisabled(dbOf(app), 'alice', true)).rejects.toThrow(AdminError);
    await expect(setDisabled(dbOf(app), '00000000-0000-4000-8000-000000000000', true)).rejects.toThrow(AdminError);
  });
});

describe('a tariff created in the database', () => {
  it('is the assigned user’s tariff once a running instance re-read the stored tariffs, and on a new one, across logins', async () => {
    const alice = await app.login('alice');
    const pro = await createTariff(dbOf(app), app.config, 'pro', {
      quotas: { room_participant_limit: 50 },
      disabled_modules: ['timer'],
      disabled_features: [],
    });
    await assignTariff(dbOf(app), app.config, 'pro', alice.email);
    await app.login('alice'); // keeps the assigned tariff (and drops alice from the instance's user cache)

    // the running instance does not know "pro" until it re-reads the stored tariffs (its timer does every minute)
    expect((await app.api(alice.accessToken).GET('/users/me/tariff')).data?.name).toBe('default');
    await app.convene.refreshTariffs();
    const tariff = await app.api(alice.accessToken).GET('/users/me/tariff');
    expect(tariff.data).toEqual(pro);
    expect(tariff.data?.enabled_modules).not.toContain('timer');

    const restarted = await app.withConfig({});
    try {
      expect((await restarted.api(alice.accessToken).GET('/users/me/tariff')).data).toEqual(pro);
    } finally {
      await restarted.close();
    }
    const listing = await listTariffs(dbOf(app), app.config);
    expect(listing.map(({ tariff, source, users }) => [tariff.name, source, users])).toEqual([
      ['default', 'configuration', 0],
      ['pro', 'database', 1],
    ]);
  });

  it('cannot take a name the configuration or the database has, nor unknown modules, features or out-of-range quotas', async () => {
    const none = { quotas: {}, disabled_modules: [], disabled_features: [] };
    await expect(createTariff(dbOf(app), app.config, 'default', none)).rejects.toThrow('the tariff "default" is defined in the configuration');
    await createTariff(dbOf(app), app.config, 'pro', none);
    await expect(createTariff(dbOf(app), app.config, 'pro', none)).rejects.toThrow('the tariff "pro" exists already');
    await expect(createTariff(dbOf(app), app.config, 'x', { ...none, disabled_modules: ['recording'] })).rejects.toThrow('unknown module "recording"');
    await expect(createTariff(dbOf(app), app.config, 'x', { ...none, disabled_features: ['chat::nothing'] })).rejects.toThrow(
      'unknown feature "chat::nothing"',
    );
    await expect(createTariff(dbOf(app), app.config, 'x', { ...none, quotas: { max_storage: 4_294_967_296 } })).rejects.toThrow(AdminError);
    await expect(createTariff(dbOf(app), app.config, ' spaced ', none)).rejects.toThrow(AdminError);
  });

  it('is not assigned by the operator while the identity provider’s claim assigns tariffs', async () => {
    await app.login('alice');
    await createTariff(dbOf(app), app.config, 'pro', { quotas: {}, disabled_modules: [], disabled_features: [] });
    const claimed = { ...app.config, tariffs: { ...app.config.tariffs, claim: 'tariff' } };
    await expect(assignTariff(dbOf(app), claimed, 'pro', 'alice@example.test')).rejects.toThrow('tariffs are assigned by the identity provider');
    await expect(assignTariff(dbOf(app), app.config, 'gold', 'alice@example.test')).rejects.toThrow('unknown tariff "gold"');
  });
});
