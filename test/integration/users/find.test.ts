import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { Config } from '../../../src/config/schema.js';
import { createKeycloakDirectory, type KeycloakDirectory } from '../../../src/domain/identity/keycloak-directory.js';
import type { User, UserService } from '../../../src/domain/users/users.service.js';
import { startKeycloakAdminStandIn, type KeycloakAdminStandIn } from '../../support/keycloak-admin-stand-in.js';
import { registerUser, rejection, shareAnEvent, userServiceFor, useUsersTestDatabase } from '../../support/users.js';

const AVATARS = 'https://avatars.test/avatar/';

const testDatabase = useUsersTestDatabase();

function service(endpoints: Partial<Config['endpoints']> = {}, findLimit = 5, directory?: KeycloakDirectory) {
  return userServiceFor(testDatabase(), { endpoints, users: { find_limit: findLimit, avatar_base_url: AVATARS }, deps: directory ? { directory } : {} });
}

async function register(
  users: UserService,
  { firstname = 'Some', lastname = 'Body', ...fields }: { firstname?: string; lastname?: string; email?: string; display_name?: string },
): Promise<User> {
  return registerUser(users, {
    firstname,
    lastname,
    ...(fields.email !== undefined ? { email: fields.email } : {}),
    ...(fields.display_name ? { display_name: fields.display_name } : {}),
  });
}

describe('findUsers', () => {
  it('answers 404 not_found when disabled by disable_users_find', async () => {
    const users = service({ disable_users_find: true });
    const me = await register(users, {});
    const error = await rejection(users.findUsers(me, 'Some'));
    expect(error.status).toBe(404);
    expect(error.code).toBe('not_found');
  });

  it.each(['', 'ab', '  ab  ', ' 😀😀 '])('answers 400 query_too_short for %j', async (q) => {
    const users = service();
    const me = await register(users, {});
    const error = await rejection(users.findUsers(me, q));
    expect(error.status).toBe(400);
    expect(error.code).toBe('query_too_short');
  });

  it('matches display name, "firstname lastname" and e-mail, case-insensitively, as registered profiles', async () => {
    const users = service();
    const me = await register(users, {});
    const ada = await register(users, { firstname: 'Ada', lastname: 'Lovelace', display_name: 'Countess' });
    const grace = await register(users, { firstname: 'Grace', lastname: 'Hopper', email: 'amazing.grace@navy.example' });
    const nick = await register(users, { firstname: 'X', lastname: 'Y', display_name: 'The Lovely One' });
    await shareAnEvent(testDatabase(), me, [ada, grace, nick]);

    const found = await users.findUsers(me, 'COUNTESS');
    expect(found).toEqual([{ kind: 'registered', ...users.toPublicProfile(ada) }]);
    expect((await users.findUsers(me, ' ada love ')).map((user) => user.email)).toEqual([ada.email]);
    expect((await users.findUsers(me, 'NAVY.example')).map((user) => user.email)).toEqual([grace.email]);
    // "Countess" (firstname Ada Lovelace) and "The Lovely One" both contain "love", ordered by display name
    expect((await users.findUsers(me, 'lovel')).map((user) => user.email)).toEqual([ada.email, nick.email]);
    expect(await users.findUsers(me, 'nobody-by-this-name')).toEqual([]);
  });

  it('takes % and _ literally', async () => {
    const users = service();
    const me = await register(users, {});
    const percent = await register(users, { display_name: '100% Ada' });
    const thousand = await register(users, { display_name: '1000 Ada' });
    const underscore = await register(users, { email: 'a_b@example.org' });
    const axb = await register(users, { email: 'axb@example.org' });
    const backslash = await register(users, { display_name: 'back\\slash' });
    const noBackslash = await register(users, { display_name: 'backslash' });
    await shareAnEvent(testDatabase(), me, [percent, thousand, underscore, axb, backslash, noBackslash]);

    expect((await users.findUsers(me, '100%')).map((user) => user.email)).toEqual([percent.email]);
    expect((await users.findUsers(me, 'a_b')).map((user) => user.email)).toEqual([underscore.email]);
    expect((await users.findUsers(me, 'k\\s')).map((user) => user.email)).toEqual([backslash.email]);
    expect(await users.findUsers(me, '%%%')).toEqual([]);
  });

  it('answers at most find_limit users', async () => {
    const users = service({}, 3);
    const me = await register(users, {});
    const matching: User[] = [];
    for (let i = 0; i < 5; i++) matching.push(await register(users, { lastname: 'Matching' }));
    await shareAnEvent(testDatabase(), me, matching);
    expect(await users.findUsers(me, 'matching')).toHaveLength(3);
  });
});

/**
 * Issue 22, finding 6: any logged-in user could list every user's address with three-character
 * queries. Now a part of a name or address finds only the people the caller shares a room or an
 * event with; anyone else is found by their whole address alone.
 */
describe('findUsers reveals no stranger', () => {
  it('lists no stranger for any part of their names or addresses', async () => {
    const users = service({}, 20);
    const me = await register(users, { email: 'me@corp.example' });
    await register(users, { firstname: 'Eve', lastname: 'Outsider', email: 'eve.outsider@corp.example', display_name: 'Eve O.' });
    await register(users, { firstname: 'Mallory', lastname: 'Outsider', email: 'mallory@corp.example' });
    for (const q of ['corp', 'example', '@co', 'eve', 'Outsider', 'Eve O.', 'eve.outsider@corp.exampl', 'mallory@corp.example.org']) {
      const others = (await users.findUsers(me, q)).filter((user) => user.email !== me.email); // the caller may find themself
      expect(others, q).toEqual([]);
    }
  });

  it('finds a stranger by their whole address, case-insensitively, as a registered profile', async () => {
    const users = service();
    const me = await register(users, {});
    const eve = await register(users, { firstname: 'Eve', lastname: 'Outsider', email: 'eve.outsider@corp.example' });
    expect(await users.findUsers(me, '  Eve.Outsider@CORP.example ')).toEqual([{ kind: 'registered', ...users.toPublicProfile(eve) }]);
  });

  it("finds by any part those who share an event: its host, its invitees, and the host's guests", async () => {
    const users = service({}, 20);
    const [me, host, coInvitee, myGuest, stranger] = [
      await register(users, { lastname: 'Me' }),
      await register(users, { lastname: 'Host' }),
      await register(users, { lastname: 'Coinvitee' }),
      await register(users, { lastname: 'Myguest' }),
      await register(users, { lastname: 'Stranger' }),
    ];
    await shareAnEvent(testDatabase(), host, [me, coInvitee]);
    await shareAnEvent(testDatabase(), me, [myGuest]);
    await shareAnEvent(testDatabase(), stranger, []);
    const found = await users.findUsers(me, 'some');
    expect(found.map((user) => user.email).sort()).toEqual([me, host, coInvitee, myGuest].map((user) => user.email).sort());
    expect((await users.findUsers(host, 'guest')).map((user) => user.email)).toEqual([]);
    expect((await users.findUsers(myGuest, 'host')).map((user) => user.email)).toEqual([]);
  });
});

describe('findUsers with users_find_use_kc', () => {
  let keycloak: KeycloakAdminStandIn;
  let directory: KeycloakDirectory;

  beforeEach(async () => {
    keycloak = await startKeycloakAdminStandIn({
      clientId: 'convene-admin',
      clientSecret: 'secret',
      users: [
        { username: 'ada', email: 'ADA@example.org', firstName: 'Ada', lastName: 'Lovelace' },
        { username: 'annie', email: 'annie@example.org', firstName: 'Annie', lastName: 'Lovelace' },
        { username: 'bob', email: 'bob@example.org', firstName: 'Bob', lastName: 'Lovelace' },
        { username: 'nomail', firstName: 'No', lastName: 'Lovelace' },
      ],
    });
    directory = createKeycloakDirectory({
      adminApiUrl: keycloak.adminApiUrl,
      tokenEndpoint: keycloak.tokenEndpoint,
      clientId: 'convene-admin',
      clientSecret: 'secret',
    });
  });
  afterEach(async () => keycloak.close());

  it("adds the directory's users that are not registered, after the registered ones", async () => {
    const users = service({ users_find_use_kc: true }, 5, directory);
    const me = await register(users, {});
    const ada = await register(users, { firstname: 'Ada', lastname: 'Lovelace', email: 'ada@example.org' });

    const found = await users.findUsers(me, 'lovelace');
    expect(found).toEqual([
      { kind: 'registered', ...users.toPublicProfile(ada) },
      { kind: 'unregistered', email: 'annie@example.org', firstname: 'Annie', lastname: 'Lovelace', avatar_url: `${AVATARS}${md5Of('annie@example.org')}` },
      { kind: 'unregistered', email: 'bob@example.org', firstname: 'Bob', lastname: 'Lovelace', avatar_url: `${AVATARS}${md5Of('bob@example.org')}` },
    ]);
  });

  it('stays within find_limit, and asks the directory nothing when registered users fill it', async () => {
    const users = service({ users_find_use_kc: true }, 2, directory);
    const me = await register(users, {});
    const ada = await register(users, { firstname: 'Ada', lastname: 'Lovelace', email: 'ada@example.org' });
    await shareAnEvent(testDatabase(), me, [ada]);

    expect((await users.findUsers(me, 'lovelace')).map((user) => [user.kind, user.email])).toEqual([
      ['registered', 'ada@example.org'],
      ['unregistered', 'annie@example.org'],
    ]);
    expect(keycloak.requests.users).toBe(1);

    await shareAnEvent(testDatabase(), me, [await register(users, { firstname: 'Eve', lastname: 'Lovelace' })]);
    expect((await users.findUsers(me, 'lovelace')).every((user) => user.kind === 'registered')).toBe(true);
    expect(keycloak.requests.users).toBe(1);
  });

  it("finds the directory's people who have logged in as registered users, whether or not they share anything", async () => {
    const users = service({ users_find_use_kc: true }, 5, directory);
    const me = await register(users, {});
    const bob = await register(users, { firstname: 'Bob', lastname: 'Lovelace', email: 'bob@example.org' });
    const found = await users.findUsers(me, 'lovelace');
    expect(found.filter((user) => user.email === 'bob@example.org')).toEqual([{ kind: 'registered', ...users.toPublicProfile(bob) }]);
  });

  it('does not ask the directory with the switch off', async () => {
    const users = service({ users_find_use_kc: false }, 5, directory);
    const me = await register(users, {});
    expect(await users.findUsers(me, 'lovelace')).toEqual([]);
    expect(keycloak.requests.users).toBe(0);
  });

  it('answers 503 when the directory fails, rather than a silently partial result', async () => {
    const users = service({ users_find_use_kc: true }, 5, directory);
    const me = await register(users, {});
    keycloak.failUsersWith = 500;
    const error = await rejection(users.findUsers(me, 'lovelace'));
    expect(error.status).toBe(503);
  });

  it('refuses to start with the switch on and no directory', () => {
    expect(() => service({ users_find_use_kc: true })).toThrow(/users_find_use_kc/);
  });
});

const KNOWN_MD5: Record<string, string> = {
  'annie@example.org': 'a4ad1421256d22e10072a3809c30fa05',
  'bob@example.org': '10ac39056a4b6f1f6804d724518ff2dc',
};
/** Known digests, so the test does not recompute what the code computes. */
const md5Of = (email: string): string => KNOWN_MD5[email] ?? 'unknown';
