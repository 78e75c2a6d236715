import { beforeAll, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';

import type { Config } from '../../../src/config/schema.js';
import type { DB } from '../../../src/db/schema.js';
import type { User, UserPatch, UserService } from '../../../src/domain/users/users.service.js';
import { registerUser, rejection, userServiceFor, useUsersTestDatabase } from '../../support/users.js';

const testDatabase = useUsersTestDatabase();
let db: Kysely<DB>;
beforeAll(() => {
  db = testDatabase();
});

function service(endpoints: Partial<Config['endpoints']> = {}) {
  return userServiceFor(db, { endpoints });
}

async function register(users: UserService, firstname: string, lastname = 'Test'): Promise<User> {
  return registerUser(users, (n) => ({ email: `${firstname.toLowerCase()}${n}@example.org`, firstname, lastname }));
}

async function roomOf(creatorId: string): Promise<string> {
  return (await db.insertInto('rooms').values({ created_by: creatorId }).returning('id').executeTakeFirstOrThrow()).id;
}

async function eventOf(creatorId: string, roomCreatorId = creatorId): Promise<string> {
  const roomId = await roomOf(roomCreatorId);
  const event = await db
    .insertInto('events')
    .values({ room_id: roomId, created_by: creatorId, updated_by: creatorId, title: 'Meeting', is_time_independent: true })
    .returning('id')
    .executeTakeFirstOrThrow();
  return event.id;
}

async function invite(eventId: string, invitee: User, inviterId: string, status: 'pending' | 'declined' = 'pending') {
  await db.insertInto('event_invites').values({ event_id: eventId, invitee: invitee.id, created_by: inviterId, status }).execute();
}

describe('toCurrentUser', () => {
  it('answers the contract fields, with used_storage summed over the assets of the rooms the user created', async () => {
    const users = service();
    const ada = await register(users, 'Ada');
    const bob = await register(users, 'Bob');
    expect(await users.toCurrentUser(ada)).toEqual({
      id: ada.id,
      email: ada.email,
      title: '',
      firstname: 'Ada',
      lastname: 'Test',
      display_name: 'Ada Test',
      avatar_url: ada.avatar_url,
      dashboard_theme: 'system',
      conference_theme: 'system',
      language: 'en-US',
      tariff_status: 'default',
      used_storage: 0,
    });

    const [first, second, bobs] = [await roomOf(ada.id), await roomOf(ada.id), await roomOf(bob.id)];
    await db
      .insertInto('assets')
      .values([
        { room_id: first, filename: 'a.pdf', size: 1_000, storage_key: 'k1' },
        { room_id: second, filename: 'b.pdf', size: 5_000_000_000, storage_key: 'k2' },
        { room_id: bobs, filename: 'c.pdf', size: 7, storage_key: 'k3' },
      ])
      .execute();
    expect((await users.toCurrentUser(ada)).used_storage).toBe(5_000_001_000);
    expect((await users.toCurrentUser(bob)).used_storage).toBe(7);
  });

  it('has toPublicProfile answer exactly the public fields', async () => {
    const users = service();
    const ada = await register(users, 'Ada');
    expect(Object.keys(users.toPublicProfile(ada)).sort()).toEqual(['avatar_url', 'display_name', 'email', 'firstname', 'id', 'lastname', 'title']);
  });
});

describe('patchMe', () => {
  it('sets the given fields, trims the display name and answers the current user', async () => {
    const users = service();
    const ada = await register(users, 'Ada');
    const result = await users.patchMe(ada, {
      title: 'Dr.',
      display_name: '  Ada L.  ',
      language: 'de-DE',
      dashboard_theme: 'dark',
      conference_theme: 'light',
    });
    expect(result).toMatchObject({
      id: ada.id,
      title: 'Dr.',
      display_name: 'Ada L.',
      language: 'de-DE',
      dashboard_theme: 'dark',
      conference_theme: 'light',
      used_storage: 0,
    });
    const row = await db.selectFrom('users').selectAll().where('id', '=', ada.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ title: 'Dr.', display_name: 'Ada L.', language: 'de-DE', dashboard_theme: 'dark', conference_theme: 'light' });
  });

  it("leaves the fields a patch does not name alone, and ignores fields that are not the user's to set", async () => {
    const users = service();
    const ada = await register(users, 'Ada');
    await users.patchMe(ada, { title: 'Dr.', language: 'de-DE' });
    const patch = { title: 'Prof.', email: 'evil@example.org', tariff_name: 'pro', id: crypto.randomUUID() } as UserPatch;
    const result = await users.patchMe(ada, patch);
    expect(result).toMatchObject({ id: ada.id, title: 'Prof.', language: 'de-DE', email: ada.email, display_name: 'Ada Test' });
    const row = await db.selectFrom('users').select(['email', 'tariff_name']).where('id', '=', ada.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ email: ada.email, tariff_name: null });
  });

  it.each(['', '   ', '\t\n'])('refuses the display name %j: 400 validation_failed on display_name', async (displayName) => {
    const users = service();
    const ada = await register(users, 'Ada');
    const error = await rejection(users.patchMe(ada, { display_name: displayName, title: 'Dr.' }));
    expect(error.status).toBe(400);
    expect(error.code).toBe('validation_failed');
    expect(error.errors).toEqual([expect.objectContaining({ field: 'display_name', code: 'invalid_length' })]);
    // nothing of a refused patch is applied
    expect((await db.selectFrom('users').select('title').where('id', '=', ada.id).executeTakeFirstOrThrow()).title).toBe('');
  });

  it('refuses a different display name with disallow_custom_display_name, and accepts the same one', async () => {
    const users = service({ disallow_custom_display_name: true });
    const ada = await register(users, 'Ada');
    const error = await rejection(users.patchMe(ada, { display_name: 'Someone Else' }));
    expect(error.status).toBe(400);
    expect(error.code).toBe('display_name_change_forbidden');

    const result = await users.patchMe(ada, { display_name: ' Ada Test ', language: 'fr-FR' });
    expect(result).toMatchObject({ display_name: 'Ada Test', language: 'fr-FR' });
  });

  it('accepts a changed display name with the switch off', async () => {
    const users = service({ disallow_custom_display_name: false });
    const ada = await register(users, 'Ada');
    expect((await users.patchMe(ada, { display_name: 'Someone Else' })).display_name).toBe('Someone Else');
  });

  it('answers 401 unknown_user when the user was deleted meanwhile', async () => {
    const users = service();
    const ada = await register(users, 'Ada');
    await db.deleteFrom('users').where('id', '=', ada.id).execute();
    expect((await rejection(users.patchMe(ada, { title: 'Dr.' }))).code).toBe('unknown_user');
  });
});

describe('getUser', () => {
  it("answers any registered user's public profile, even of a stranger", async () => {
    const users = service();
    const ada = await register(users, 'Ada');
    const stranger = await register(users, 'Stranger');
    expect(await users.getUser(ada, stranger.id)).toEqual(users.toPublicProfile(stranger));
  });

  it.each([crypto.randomUUID(), 'not-a-uuid', '42'])('answers 404 for %s', async (id) => {
    const users = service();
    const ada = await register(users, 'Ada');
    const error = await rejection(users.getUser(ada, id));
    expect(error.status).toBe(404);
    expect(error.code).toBe('not_found');
  });
});

describe('listVisibleUsers', () => {
  it('lists the caller and everyone sharing an event or room with them, and no stranger', async () => {
    const users = service();
    const [me, host, coInvitee, myGuest, roomOwner, declined, stranger, strangersGuest] = [
      await register(users, 'Me'),
      await register(users, 'Host'),
      await register(users, 'Coinvitee'),
      await register(users, 'Myguest'),
      await register(users, 'Roomowner'),
      await register(users, 'Declined'),
      await register(users, 'Stranger'),
      await register(users, 'Strangersguest'),
    ];
    // I am invited to the host's event, with a co-invitee and someone who declined
    const hosts = await eventOf(host.id);
    await invite(hosts, me, host.id);
    await invite(hosts, coInvitee, host.id);
    await invite(hosts, declined, host.id, 'declined');
    // I created an event (in a room someone else created) and invited a guest
    const mine = await eventOf(me.id, roomOwner.id);
    await invite(mine, myGuest, me.id);
    // a stranger's own event, with their own guest, and a room of theirs
    const strangers = await eventOf(stranger.id);
    await invite(strangers, strangersGuest, stranger.id);
    await roomOf(stranger.id);

    const { items, total } = await users.listVisibleUsers(me, { page: 1, per_page: 100 });
    expect(items.map((profile) => profile.display_name)).toEqual(['Coinvitee Test', 'Declined Test', 'Host Test', 'Me Test', 'Myguest Test', 'Roomowner Test']);
    expect(total).toBe(6);
    expect(items[0]).toEqual(users.toPublicProfile(coInvitee));

    const seenByCoInvitee = await users.listVisibleUsers(coInvitee, { page: 1, per_page: 100 });
    expect(seenByCoInvitee.items.map((profile) => profile.display_name)).toEqual(['Coinvitee Test', 'Declined Test', 'Host Test', 'Me Test']);
    const seenByStranger = await users.listVisibleUsers(stranger, { page: 1, per_page: 100 });
    expect(seenByStranger.items.map((profile) => profile.id)).toEqual([stranger.id, strangersGuest.id]);
  });

  it('lists only the caller when they share nothing', async () => {
    const users = service();
    const loner = await register(users, 'Loner');
    await register(users, 'Other');
    expect(await users.listVisibleUsers(loner, { page: 1, per_page: 30 })).toEqual({ items: [users.toPublicProfile(loner)], total: 1 });
  });

  it('pages by display name then id, with the total of all pages', async () => {
    const users = service();
    const host = await register(users, 'Host');
    const event = await eventOf(host.id);
    // two invitees with the same display name: the id orders them
    const twins = [await register(users, 'Twin'), await register(users, 'Twin')].sort((a, b) => (a.id < b.id ? -1 : 1));
    const others = [await register(users, 'Alpha'), await register(users, 'Zulu')];
    for (const user of [...twins, ...others]) await invite(event, user, host.id);

    const pages = [];
    for (const page of [1, 2, 3, 4]) pages.push(await users.listVisibleUsers(host, { page, per_page: 2 }));
    expect(pages.map((page) => page.total)).toEqual([5, 5, 5, 5]);
    expect(pages.map((page) => page.items.map((profile) => profile.id))).toEqual([[others[0]!.id, host.id], [twins[0]!.id, twins[1]!.id], [others[1]!.id], []]);
  });
});
